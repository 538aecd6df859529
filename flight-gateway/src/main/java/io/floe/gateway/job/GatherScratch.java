package io.floe.gateway.job;

/**
 * The working arrays of one stream's gathers, kept from part to part: each part of a shuffled epoch
 * needs a dozen arrays of its row count, and made anew for every part they were most of what the
 * serving path put on the heap (about 150 MB an epoch of 4 M rows, collected young or, behind a
 * slow reader, promoted and marked). An array is valid until the next part asks for it again; a
 * stream gathers one part at a time, so one scratch serves it. Not thread-safe.
 */
final class GatherScratch {
  private long[] keys = new long[0];
  private int[] order = new int[0];
  private int[] spare = new int[0];
  private final int[] digitCounts;
  private int[] runSource = new int[0];
  private int[] runFrom = new int[0];
  private int[] runTo = new int[0];
  private int[] runLength = new int[0];
  private long[] valueAddress = new long[0];
  private int[] valueLength = new int[0];
  private int[] runAt = new int[0];
  private int[] partRunTo = new int[0];
  private int[] partRunLength = new int[0];

  /** {@code array}, or a longer one when it holds fewer than {@code length} values. */
  private static int[] atLeast(int[] array, int length) {
    return array.length >= length ? array : new int[length];
  }

  private static long[] atLeast(long[] array, int length) {
    return array.length >= length ? array : new long[length];
  }

  GatherScratch(int digits) {
    this.digitCounts = new int[digits];
  }

  /** The rows' sort keys. */
  long[] keys(int rows) {
    return keys = atLeast(keys, rows);
  }

  /** The sorted order of the rows, and the other of the sort's two buffers. */
  int[] order(int rows) {
    return order = atLeast(order, rows);
  }

  int[] spare(int rows) {
    return spare = atLeast(spare, rows);
  }

  /** A count per digit value of the radix sort. */
  int[] digitCounts() {
    return digitCounts;
  }

  int[] runSource(int runs) {
    return runSource = atLeast(runSource, runs);
  }

  int[] runFrom(int runs) {
    return runFrom = atLeast(runFrom, runs);
  }

  int[] runTo(int runs) {
    return runTo = atLeast(runTo, runs);
  }

  int[] runLength(int runs) {
    return runLength = atLeast(runLength, runs);
  }

  /** Where each value of a variable-width column starts in its source. */
  long[] valueAddress(int rows) {
    return valueAddress = atLeast(valueAddress, rows);
  }

  /** Each value's length in bytes. */
  int[] valueLength(int rows) {
    return valueLength = atLeast(valueLength, rows);
  }

  /** Where each run of a part shuffled in runs starts in the part, in the part's order. */
  int[] partRunTo(int runs) {
    return partRunTo = atLeast(partRunTo, runs);
  }

  /** Each such run's row count. */
  int[] partRunLength(int runs) {
    return partRunLength = atLeast(partRunLength, runs);
  }

  /** Which run lands at each place of the part. */
  int[] runAt(int rows) {
    return runAt = atLeast(runAt, rows);
  }
}
