package io.floe.job;

import io.floe.util.Preconditions;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * One epoch's order of a dataset's rows: a pure function of the slices' row counts, the order
 * settings and the epoch. Every slice is cut into blocks of {@code blockRows}; the blocks are
 * shuffled; consecutive runs of {@code windowBlocks} shuffled blocks form windows whose units are
 * shuffled among themselves, a unit being {@code runRows} neighbouring rows of one block (a block's
 * last unit may be shorter). So rows mix across the whole dataset at block grain and within a
 * window at unit grain (row grain when {@code runRows} is 1), while a window's rows sit in a
 * bounded number of blocks. Without shuffle the order is the dataset's global order.
 *
 * <p>Thread-safe. Window permutations are computed when first needed and a few are kept.
 */
public final class EpochOrder {
  // Streams locate their batches in order, so a few windows each are enough; more only held heap
  // that outlived an epoch.
  private static final int CACHED_WINDOWS = 16;
  private static final long BLOCKS_STREAM = 0x51_7c_c1_b7_27_22_0a_95L;

  /** A row of the dataset: its slice (index in the layout) and its row in that slice. */
  public record RowRef(int slice, long row) {}

  private final int[] blockSlice;
  private final long[] blockStart;

  /** placeBlock[i]: the block at shuffled place i. */
  private final int[] placeBlock;

  /** placeStart[i]: the epoch position where place i starts; the last entry is the row count. */
  private final long[] placeStart;

  private final boolean shuffle;
  private final int blockRows;
  private final int windowBlocks;
  private final long windowSeed;
  private final int runRows;
  private final Map<Integer, WindowUnits> windows =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, WindowUnits> eldest) {
          return size() > CACHED_WINDOWS;
        }
      };

  public EpochOrder(long[] sliceRows, OrderSettings settings, long epoch) {
    Preconditions.checkArgument(epoch >= 0, "Invalid epoch: %s", epoch);
    int blockRows = settings.blockRows();
    int blocks = 0;
    for (long rows : sliceRows) {
      blocks = Math.addExact(blocks, Math.toIntExact((rows + blockRows - 1) / blockRows));
    }
    this.blockSlice = new int[blocks];
    this.blockStart = new long[blocks];
    long[] blockRowCount = new long[blocks];
    int b = 0;
    for (int s = 0; s < sliceRows.length; s++) {
      for (long start = 0; start < sliceRows[s]; start += blockRows) {
        blockSlice[b] = s;
        blockStart[b] = start;
        blockRowCount[b] = Math.min(blockRows, sliceRows[s] - start);
        b++;
      }
    }
    this.shuffle = settings.shuffle();
    this.blockRows = blockRows;
    this.windowBlocks = settings.windowBlocks();
    this.runRows = settings.runRows();
    Preconditions.checkArgument(
        runRows >= 1 && runRows <= blockRows,
        "Invalid run_rows %s: must be in 1..block_rows (%s)",
        runRows,
        blockRows);
    long epochSeed = mix(settings.seed() ^ mix(epoch + 0x9E3779B97F4A7C15L));
    this.windowSeed = mix(epochSeed + 1);
    this.placeBlock = new int[blocks];
    for (int i = 0; i < blocks; i++) {
      placeBlock[i] = i;
    }
    if (shuffle) {
      shuffleInPlace(placeBlock, new SplittableRandom(mix(epochSeed ^ BLOCKS_STREAM)));
    }
    this.placeStart = new long[blocks + 1];
    for (int i = 0; i < blocks; i++) {
      placeStart[i + 1] = placeStart[i] + blockRowCount[placeBlock[i]];
    }
  }

  public long rows() {
    return placeStart[placeStart.length - 1];
  }

  /** The row at epoch position {@code position} (0 ≤ position < rows). */
  public RowRef at(long position) {
    Preconditions.checkArgument(
        0 <= position && position < rows(),
        "Invalid position %s: the epoch has %s rows",
        position,
        rows());
    long target = position;
    if (shuffle) {
      int window = place(position) / windowBlocks;
      long windowStart = placeStart[window * windowBlocks];
      WindowUnits units = window(window);
      int k = units.placed((int) (position - windowStart));
      target = windowStart + units.offset(k) + (position - windowStart - units.placedStart(k));
    }
    int place = place(target);
    int block = placeBlock[place];
    return new RowRef(blockSlice[block], blockStart[block] + (target - placeStart[place]));
  }

  /**
   * Locates the rows at positions {@code from, from + 1, …, from + count − 1} into {@code
   * slices[offset + i]} and {@code rows[offset + i]}: the same as {@link #at} for each, but looking
   * up each window's permutation once, which is what serving a batch needs.
   */
  public void locate(long from, int count, int[] slices, long[] rows, int offset) {
    checkPositions(from, count);
    long position = from;
    int i = 0;
    while (i < count) {
      if (!shuffle) {
        int place = place(position);
        int block = placeBlock[place];
        long start = placeStart[place];
        long end = placeStart[place + 1];
        for (; i < count && position < end; i++, position++) {
          slices[offset + i] = blockSlice[block];
          rows[offset + i] = blockStart[block] + (position - start);
        }
        continue;
      }
      int window = place(position) / windowBlocks;
      int first = window * windowBlocks;
      int last = Math.min(first + windowBlocks, placeBlock.length);
      long windowStart = placeStart[first];
      long windowEnd = placeStart[last];
      WindowUnits units = window(window);
      // A window of whole blocks (all but those holding a slice's last rows) finds a row's place
      // by division rather than by a search.
      boolean whole = windowEnd - windowStart == (long) (last - first) * blockRows;
      while (i < count && position < windowEnd) {
        int q = (int) (position - windowStart);
        int k = units.placed(q);
        int within = q - units.placedStart(k);
        // The unit's rows are neighbours in one block: located together.
        int n = Math.min(units.length(k) - within, count - i);
        long target = windowStart + units.offset(k) + within;
        int place;
        if (whole) {
          place = first + (int) ((target - windowStart) / blockRows);
        } else {
          int index = Arrays.binarySearch(placeStart, first, last + 1, target);
          place = index >= 0 ? index : -index - 2;
        }
        int block = placeBlock[place];
        int slice = blockSlice[block];
        long row = blockStart[block] + (target - placeStart[place]);
        for (int t = 0; t < n; t++) {
          slices[offset + i + t] = slice;
          rows[offset + i + t] = row + t;
        }
        i += n;
        position += n;
      }
    }
  }

  /**
   * Marks {@code marked[s]} for every slice {@code s} that holds a row at positions {@code from, …,
   * from + count − 1}, or may: exact without shuffle, and for a shuffled order every slice with a
   * block in a window the positions fall in. It visits blocks, not rows, so a plan can say which
   * nodes a batch needs without locating its rows.
   */
  public void markSlices(long from, int count, boolean[] marked) {
    checkPositions(from, count);
    long position = from;
    long end = from + count;
    while (position < end) {
      int place = place(position);
      int first = shuffle ? place / windowBlocks * windowBlocks : place;
      int last = shuffle ? Math.min(first + windowBlocks, placeBlock.length) : place + 1;
      for (int p = first; p < last; p++) {
        marked[blockSlice[placeBlock[p]]] = true;
      }
      position = placeStart[last];
    }
  }

  private void checkPositions(long from, int count) {
    Preconditions.checkArgument(
        0 <= from && count >= 0 && from + count <= rows(),
        "Invalid positions [%s, %s): the epoch has %s rows",
        from,
        from + count,
        rows());
  }

  private int place(long position) {
    int index = Arrays.binarySearch(placeStart, position);
    // Places are never empty, so starts are strictly increasing and a hit is the place itself.
    return index >= 0 ? index : -index - 2;
  }

  private WindowUnits window(int window) {
    synchronized (windows) {
      WindowUnits units = windows.get(window);
      if (units == null) {
        units = new WindowUnits(window);
        windows.put(window, units);
      }
      return units;
    }
  }

  /**
   * One window's units in the epoch's order. Units are cut block by block, so each is one run of
   * one block's rows. When every unit has {@code runRows} rows (always, for single rows) a unit is
   * found by division and only the permutation is kept; otherwise the units' offsets too.
   */
  private final class WindowUnits {
    /** permutation[k]: the unit at the window's k-th place, units numbered in the blocks' order. */
    private final int[] permutation;

    /** Where each unit starts in the window's blocks, by unit; null when all are whole. */
    private final int[] unitOffset;

    /** Where the k-th placed unit starts in the window's part of the epoch; null when all whole. */
    private final int[] placedOffset;

    WindowUnits(int window) {
      int first = window * windowBlocks;
      int last = Math.min(first + windowBlocks, placeBlock.length);
      int count = 0;
      boolean whole = true;
      for (int p = first; p < last; p++) {
        long rows = placeStart[p + 1] - placeStart[p];
        count += (int) ((rows + runRows - 1) / runRows);
        whole &= rows % runRows == 0;
      }
      permutation = new int[count];
      for (int i = 0; i < count; i++) {
        permutation[i] = i;
      }
      shuffleInPlace(permutation, new SplittableRandom(mix(windowSeed + window)));
      if (whole) {
        unitOffset = null;
        placedOffset = null;
        return;
      }
      unitOffset = new int[count + 1];
      int u = 0;
      for (int p = first; p < last; p++) {
        int start = (int) (placeStart[p] - placeStart[first]);
        int end = (int) (placeStart[p + 1] - placeStart[first]);
        for (int at = start; at < end; at += runRows) {
          unitOffset[u++] = at;
        }
      }
      unitOffset[count] = (int) (placeStart[last] - placeStart[first]);
      placedOffset = new int[count + 1];
      for (int k = 0; k < count; k++) {
        placedOffset[k + 1] = placedOffset[k] + unitLength(permutation[k]);
      }
    }

    /** The place (index into the permutation) of the unit at offset {@code q} of the window. */
    int placed(int q) {
      if (placedOffset == null) {
        return runRows == 1 ? q : q / runRows;
      }
      int index = Arrays.binarySearch(placedOffset, q);
      // Units are never empty, so their offsets strictly increase and a hit is the unit itself.
      return index >= 0 ? index : -index - 2;
    }

    /** Where the unit at place {@code k} starts in the window's part of the epoch. */
    int placedStart(int k) {
      return placedOffset == null ? k * runRows : placedOffset[k];
    }

    /** Where the unit at place {@code k} starts in the window's blocks. */
    int offset(int k) {
      int unit = permutation[k];
      return unitOffset == null ? unit * runRows : unitOffset[unit];
    }

    /** The rows of the unit at place {@code k}. */
    int length(int k) {
      return unitLength(permutation[k]);
    }

    private int unitLength(int unit) {
      return unitOffset == null ? runRows : unitOffset[unit + 1] - unitOffset[unit];
    }
  }

  private static void shuffleInPlace(int[] values, SplittableRandom random) {
    for (int i = values.length - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int swap = values[i];
      values[i] = values[j];
      values[j] = swap;
    }
  }

  /** A 64-bit finalizer (Stafford's variant 13) so that nearby seeds give unrelated streams. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
