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
 * @param memoryFloor the least Arrow memory the slices can take once loaded ({@link
 *     ArrowSizeFloor}; none when the table's metadata cannot bound it, e.g. for a filtered dataset)
 */
public record ScanPlan(
    TableSource source,
    long snapshotId,
    String arrowSchemaJson,
    List<SliceSpec> slices,
    MemoryFloor memoryFloor) {
  /**
   * The least Arrow memory a plan's slices take once loaded, and the rows that floor counts.
   *
   * @param bytes the floor in bytes (0: unknown)
   * @param rows the rows it counts
   */
  public record MemoryFloor(long bytes, long rows) {
    public static final MemoryFloor NONE = new MemoryFloor(0, 0);
  }

  public ScanPlan {
    slices = List.copyOf(slices);
  }
}
