package io.floe.gateway.job;

import java.util.Arrays;

/**
 * How to copy one part's rows: runs of rows that sit next to each other both in a source batch and
 * in the part, listed in the order of the rows in the sources, so that the copy of every column
 * walks each source batch forwards instead of jumping about it.
 *
 * <p>A shuffled part picks rows at random from a window of some tens of thousands of rows, several
 * megabytes of columns: fetched in the part's order, nearly every value is a cache miss. Fetched in
 * the sources' order, each column is read in one forward sweep that the hardware prefetches, and
 * only the writes land at random, into the part's new vectors, which are small enough to stay in
 * cache. An ordered part's rows are already in the sources' order and make a few long runs, which
 * the columns copy in bulk.
 *
 * <p>Built once per part and shared by its columns, so rows are located, checked and ordered once,
 * not once per column.
 */
final class GatherRuns {
  private static final int DIGIT_BITS = 11;
  private static final int DIGIT_MASK = (1 << DIGIT_BITS) - 1;

  private final int rows;
  private final int runs;
  private final int[] source;
  private final int[] from;
  private final int[] to;
  private final int[] length;
  private final GatherScratch scratch;

  private GatherRuns(
      int rows, int runs, int[] source, int[] from, int[] to, int[] length, GatherScratch scratch) {
    this.scratch = scratch;
    this.rows = rows;
    this.runs = runs;
    this.source = source;
    this.from = from;
    this.to = to;
    this.length = length;
  }

  /**
   * The runs for a part of {@code count} rows: row {@code i} of the part is row {@code indexIn[i]}
   * of source batch {@code source[i]}; {@code sourceRows[b]} is batch b's row count and {@code
   * firstRow[b]} the number of rows of all the batches before b, so that {@code firstRow[b] + j}
   * orders rows as the sources hold them.
   *
   * @throws IndexOutOfBoundsException if a row is outside its batch: the copies read memory
   *     unchecked, so this is where rows are checked
   */
  static GatherRuns of(int[] source, int[] indexIn, int count, int[] sourceRows, long[] firstRow) {
    return of(source, indexIn, count, sourceRows, firstRow, newScratch());
  }

  /** A scratch for {@link #of}'s arrays, to be kept by a stream. */
  static GatherScratch newScratch() {
    return new GatherScratch(1 << DIGIT_BITS);
  }

  /**
   * {@link #of}, in {@code scratch}'s arrays: the runs, and the arrays the columns' copies take
   * from {@link #scratch()}, are valid until the scratch's next use.
   */
  static GatherRuns of(
      int[] source,
      int[] indexIn,
      int count,
      int[] sourceRows,
      long[] firstRow,
      GatherScratch scratch) {
    long[] keys = scratch.keys(count);
    boolean ascending = true;
    for (int i = 0; i < count; i++) {
      int b = source[i];
      int j = indexIn[i];
      if (j < 0 || j >= sourceRows[b]) {
        throw new IndexOutOfBoundsException(
            "Row " + j + " is outside source batch " + b + " of " + sourceRows[b] + " rows");
      }
      keys[i] = firstRow[b] + j;
      ascending &= i == 0 || keys[i] > keys[i - 1];
    }
    if (ascending) {
      return merged(source, indexIn, count, scratch);
    }
    GatherRuns runs = shuffledRuns(source, indexIn, count, keys, scratch);
    return runs != null
        ? runs
        : lone(source, indexIn, count, sortedOrder(keys, count, scratch), scratch);
  }

  /**
   * A part shuffled in units of several neighbouring rows (a job with {@code run_rows} above 1):
   * its rows come as runs in the part's order already, which are sorted into the sources' order as
   * runs, not row by row. Null when the runs average under two rows (a single-row shuffle), for
   * which {@link #lone} is cheaper.
   */
  private static GatherRuns shuffledRuns(
      int[] source, int[] indexIn, int count, long[] keys, GatherScratch scratch) {
    int joined = 0;
    for (int i = 1; i < count; i++) {
      joined += keys[i] == keys[i - 1] + 1 && source[i] == source[i - 1] ? 1 : 0;
    }
    int runs = count - joined;
    if (runs * 2 > count) {
      return null;
    }
    int[] partTo = scratch.partRunTo(runs);
    int[] partLength = scratch.partRunLength(runs);
    int r = 0;
    for (int i = 0; i < count; r++) {
      int n = 1;
      while (i + n < count && keys[i + n] == keys[i] + n && source[i + n] == source[i]) {
        n++;
      }
      partTo[r] = i;
      partLength[r] = n;
      keys[r] = keys[i]; // r ≤ i: the keys still to be read are not overwritten
      i += n;
    }
    int[] order = sortedOrder(keys, runs, scratch);
    int[] runSource = scratch.runSource(runs);
    int[] runFrom = scratch.runFrom(runs);
    int[] runTo = scratch.runTo(runs);
    int[] runLength = scratch.runLength(runs);
    for (int k = 0; k < runs; k++) {
      int run = order[k];
      int to = partTo[run];
      runSource[k] = source[to];
      runFrom[k] = indexIn[to];
      runTo[k] = to;
      runLength[k] = partLength[run];
    }
    return new GatherRuns(count, runs, runSource, runFrom, runTo, runLength, scratch);
  }

  /**
   * Rows already in the sources' order (an ordered job's part): runs as long as the rows stay next
   * to each other.
   */
  private static GatherRuns merged(int[] source, int[] indexIn, int count, GatherScratch scratch) {
    int[] runSource = scratch.runSource(count);
    int[] runFrom = scratch.runFrom(count);
    int[] runTo = scratch.runTo(count);
    int[] runLength = scratch.runLength(count);
    int runs = 0;
    int i = 0;
    while (i < count) {
      int b = source[i];
      int j = indexIn[i];
      int n = 1;
      while (i + n < count && source[i + n] == b && indexIn[i + n] == j + n) {
        n++;
      }
      runSource[runs] = b;
      runFrom[runs] = j;
      runTo[runs] = i;
      runLength[runs] = n;
      runs++;
      i += n;
    }
    return new GatherRuns(count, runs, runSource, runFrom, runTo, runLength, scratch);
  }

  /**
   * Rows in another order (a shuffled part): one run per row, in the sources' order. Two rows that
   * happen to sit next to each other both ways are rare enough not to look for.
   */
  private static GatherRuns lone(
      int[] source, int[] indexIn, int count, int[] order, GatherScratch scratch) {
    int[] runSource = scratch.runSource(count);
    int[] runFrom = scratch.runFrom(count);
    for (int k = 0; k < count; k++) {
      int i = order[k];
      runSource[k] = source[i];
      runFrom[k] = indexIn[i];
    }
    return new GatherRuns(count, count, runSource, runFrom, order, null, scratch);
  }

  /**
   * The positions of {@code keys[0 .. count)} in ascending order of key, equal keys in their order:
   * a least-significant-digit radix sort over the keys' spread, skipping digits they all share.
   */
  static int[] sortedOrder(long[] keys, int count) {
    return sortedOrder(keys, count, newScratch());
  }

  private static int[] sortedOrder(long[] keys, int count, GatherScratch scratch) {
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (int i = 0; i < count; i++) {
      min = Math.min(min, keys[i]);
      max = Math.max(max, keys[i]);
    }
    int[] order = scratch.order(count);
    for (int i = 0; i < count; i++) {
      order[i] = i;
    }
    if (count < 2) {
      return order;
    }
    int bits = 64 - Long.numberOfLeadingZeros(max - min);
    int[] spare = scratch.spare(count);
    int[] counts = scratch.digitCounts();
    for (int shift = 0; shift < bits; shift += DIGIT_BITS) {
      Arrays.fill(counts, 0);
      for (int i = 0; i < count; i++) {
        counts[(int) ((keys[i] - min) >>> shift) & DIGIT_MASK]++;
      }
      if (counts[(int) ((keys[0] - min) >>> shift) & DIGIT_MASK] == count) {
        continue; // every key has this digit: the pass would change nothing
      }
      int total = 0;
      for (int d = 0; d < counts.length; d++) {
        int c = counts[d];
        counts[d] = total;
        total += c;
      }
      for (int k = 0; k < count; k++) {
        int i = order[k];
        spare[counts[(int) ((keys[i] - min) >>> shift) & DIGIT_MASK]++] = i;
      }
      int[] swap = order;
      order = spare;
      spare = swap;
    }
    return order;
  }

  /** Where the columns' copies take their working arrays from. */
  GatherScratch scratch() {
    return scratch;
  }

  /** The runs' source batches, for a copy loop over {@link #lone} runs. */
  int[] sources() {
    return source;
  }

  /** The runs' first rows in their source batches. */
  int[] froms() {
    return from;
  }

  /** Where the runs' first rows land in the part. */
  int[] tos() {
    return to;
  }

  /** The rows of the part. */
  int rows() {
    return rows;
  }

  /** How many runs there are. */
  int runs() {
    return runs;
  }

  /** Run {@code r}'s source batch. */
  int source(int r) {
    return source[r];
  }

  /** Run {@code r}'s first row in its source batch. */
  int from(int r) {
    return from[r];
  }

  /** Where run {@code r}'s first row lands in the part. */
  int to(int r) {
    return to[r];
  }

  /** Run {@code r}'s row count. */
  int length(int r) {
    return length == null ? 1 : length[r];
  }

  /** Whether every run is one row: then {@link #sources}, {@link #froms} and {@link #tos}. */
  boolean lone() {
    return length == null;
  }
}
