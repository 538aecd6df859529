package io.floe.iceberg;

import io.floe.spec.TableSource;
import java.util.List;

/**
 * The outcome of planning a dataset: the pinned snapshot, the served schema and the slices.
 *
 * @param source where the table came from
 * @param snapshotId the pinned snapshot, or -1 for a table with no snapshot (no rows)
 * @param arrowSchemaJson the served Arrow schema as Arrow's JSON form
 * @param slices slice specs in global row order
 */
public record ScanPlan(
    TableSource source, long snapshotId, String arrowSchemaJson, List<SliceSpec> slices) {
  public ScanPlan {
    slices = List.copyOf(slices);
  }
}
