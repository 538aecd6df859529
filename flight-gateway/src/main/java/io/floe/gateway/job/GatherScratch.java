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

  GatherScratch(int digits) {
    this.digitCounts = new int[digits];
  }

  /** The rows' sort keys. */
  long[] keys(int rows) {
    return keys.length >= rows ? keys : (keys = new long[rows]);
  }

  /** The sorted order of the rows, and the other of the sort's two buffers. */
  int[] order(int rows) {
    return order.length >= rows ? order : (order = new int[rows]);
  }

  int[] spare(int rows) {
    return spare.length >= rows ? spare : (spare = new int[rows]);
  }

  /** A count per digit value of the radix sort. */
  int[] digitCounts() {
    return digitCounts;
  }

  int[] runSource(int runs) {
    return runSource.length >= runs ? runSource : (runSource = new int[runs]);
  }

  int[] runFrom(int runs) {
    return runFrom.length >= runs ? runFrom : (runFrom = new int[runs]);
  }

  int[] runTo(int runs) {
    return runTo.length >= runs ? runTo : (runTo = new int[runs]);
  }

  int[] runLength(int runs) {
    return runLength.length >= runs ? runLength : (runLength = new int[runs]);
  }

  /** Where each value of a variable-width column starts in its source. */
  long[] valueAddress(int rows) {
    return valueAddress.length >= rows ? valueAddress : (valueAddress = new long[rows]);
  }

  /** Each value's length in bytes. */
  int[] valueLength(int rows) {
    return valueLength.length >= rows ? valueLength : (valueLength = new int[rows]);
  }

  /** Which run lands at each place of the part. */
  int[] runAt(int rows) {
    return runAt.length >= rows ? runAt : (runAt = new int[rows]);
  }
}
