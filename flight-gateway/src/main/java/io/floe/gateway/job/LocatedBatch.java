package io.floe.gateway.job;

import io.floe.job.RankShare;

/**
 * One rank's rows of one global batch, in the epoch's order: place {@code i} of the rank's share is
 * row {@code rows[i]} of the slice at index {@code slices[i]} of the layout. Located once per batch
 * on a node and shared by the streams that serve it; never changed.
 */
final class LocatedBatch {
  private final int[] slices;
  private final long[] rows;

  private LocatedBatch(int[] slices, long[] rows) {
    this.slices = slices;
    this.rows = rows;
  }

  static LocatedBatch of(RankShare share, long batch) {
    int size = share.rowsPerBatch();
    int[] slices = new int[size];
    long[] rows = new long[size];
    share.locate(batch, slices, rows);
    return new LocatedBatch(slices, rows);
  }

  int size() {
    return slices.length;
  }

  /** The layout index of the slice holding place {@code i}. */
  int slice(int i) {
    return slices[i];
  }

  /** The row within its slice of place {@code i}. */
  long row(int i) {
    return rows[i];
  }
}
