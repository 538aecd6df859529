package io.floe.gateway.job;

import io.floe.job.RankShare;

/**
 * One rank's rows of one global batch, grouped by slice: the rows of slice {@code s} are {@code
 * rows[offset(s)] … rows[offset(s) + count(s) − 1]}, in epoch order. Every endpoint of a job read
 * serves one slice's part of the same batches, so the batch is located once and each endpoint takes
 * its part.
 */
final class BatchParts {
  private final long[] rows;
  private final int[] offsets;

  private BatchParts(long[] rows, int[] offsets) {
    this.rows = rows;
    this.offsets = offsets;
  }

  static BatchParts of(RankShare share, long batch, int sliceCount) {
    int size = share.rowsPerBatch();
    int[] slices = new int[size];
    long[] located = new long[size];
    share.locate(batch, slices, located);
    int[] offsets = new int[sliceCount + 1];
    for (int slice : slices) {
      offsets[slice + 1]++;
    }
    for (int s = 0; s < sliceCount; s++) {
      offsets[s + 1] += offsets[s];
    }
    int[] next = java.util.Arrays.copyOf(offsets, sliceCount);
    long[] rows = new long[size];
    for (int i = 0; i < size; i++) {
      rows[next[slices[i]]++] = located[i];
    }
    return new BatchParts(rows, offsets);
  }

  long[] rows() {
    return rows;
  }

  int offset(int slice) {
    return offsets[slice];
  }

  int count(int slice) {
    return offsets[slice + 1] - offsets[slice];
  }

  /** The slices holding any of the rows. */
  boolean touches(int slice) {
    return count(slice) > 0;
  }
}
