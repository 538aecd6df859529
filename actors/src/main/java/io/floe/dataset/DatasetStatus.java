package io.floe.dataset;

import io.floe.serialization.CborSerializable;
import io.floe.table.TableSource;

/**
 * A dataset's progress as clients see it through {@code status} and {@code list}.
 *
 * @param source where its table came from, once planned; else null
 * @param failure why it FAILED, or null
 * @param secondsToReady seconds from the load request to READY, or -1 before that
 */
public record DatasetStatus(
    String name,
    TableSource source,
    DatasetState state,
    int slicesLoaded,
    int slicesTotal,
    long rows,
    long bytes,
    long snapshotId,
    Failure failure,
    double secondsToReady)
    implements CborSerializable {
  public static DatasetStatus absent(String name) {
    return new DatasetStatus(name, null, DatasetState.ABSENT, 0, 0, 0, 0, -1, null, -1);
  }
}
