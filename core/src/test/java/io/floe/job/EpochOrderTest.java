package io.floe.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EpochOrderTest {
  /** Slices of uneven sizes, one empty, as planning produces them. */
  private static final long[] SLICES = {1000, 0, 777, 4096, 1, 2500};

  private static final long ROWS = Arrays.stream(SLICES).sum();

  private static long global(EpochOrder.RowRef ref) {
    long start = 0;
    for (int s = 0; s < ref.slice(); s++) {
      start += SLICES[s];
    }
    assertThat(ref.row()).isBetween(0L, SLICES[ref.slice()] - 1);
    return start + ref.row();
  }

  private static long[] order(OrderSettings settings, long epoch) {
    EpochOrder order = new EpochOrder(SLICES, settings, epoch);
    long[] rows = new long[(int) order.rows()];
    for (int p = 0; p < rows.length; p++) {
      rows[p] = global(order.at(p));
    }
    return rows;
  }

  @ParameterizedTest
  @ValueSource(longs = {0, 1, 42, -7, Long.MAX_VALUE})
  void everyRowHasExactlyOnePosition(long seed) {
    for (int blockRows : new int[] {1, 64, 1000, 5000}) {
      for (int window : new int[] {1, 3, 16}) {
        long[] rows = order(new OrderSettings(seed, true, blockRows, window), 2);
        assertThat(rows).hasSize((int) ROWS);
        long[] sorted = rows.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
          assertThat(sorted[i]).isEqualTo(i);
        }
      }
    }
  }

  @Test
  void theOrderIsAFunctionOfSeedAndEpochOnly() {
    OrderSettings settings = new OrderSettings(11, true, 100, 4);
    assertThat(order(settings, 3)).isEqualTo(order(settings, 3));
    assertThat(order(settings, 3)).isNotEqualTo(order(settings, 4));
    assertThat(order(settings, 3)).isNotEqualTo(order(new OrderSettings(12, true, 100, 4), 3));
  }

  @Test
  void withoutShuffleTheOrderIsTheGlobalOrder() {
    long[] rows = order(new OrderSettings(5, false, 100, 4), 9);
    for (int p = 0; p < rows.length; p++) {
      assertThat(rows[p]).isEqualTo(p);
    }
  }

  @Test
  void aWindowDrawsItsRowsFromAtMostWindowBlocksBlocks() {
    int blockRows = 50;
    int window = 4;
    long[] rows = order(new OrderSettings(3, true, blockRows, window), 0);
    // Blocks never straddle slices: name a block by (slice, row / blockRows).
    EpochOrder order = new EpochOrder(SLICES, new OrderSettings(3, true, blockRows, window), 0);
    int windowRows = blockRows * window;
    Set<String> blocks = new HashSet<>();
    long mixed = 0;
    for (int p = 0; p < rows.length; p++) {
      EpochOrder.RowRef ref = order.at(p);
      blocks.add(ref.slice() + "/" + ref.row() / blockRows);
      if (p > 0 && rows[p] != rows[p - 1] + 1) {
        mixed++;
      }
      if ((p + 1) % windowRows == 0) {
        // Windows are runs of whole blocks; with short blocks a window holds fewer rows, so a
        // run of windowRows positions spans at most two windows.
        assertThat(blocks.size()).isLessThanOrEqualTo(2 * window);
        blocks.clear();
      }
    }
    assertThat(mixed).as("rows are shuffled within windows").isGreaterThan(rows.length / 2);
  }

  @Test
  void locatingRunsOfPositionsAgreesWithOnePositionAtATime() {
    for (boolean shuffle : new boolean[] {true, false}) {
      EpochOrder order = new EpochOrder(SLICES, new OrderSettings(8, shuffle, 300, 3), 5);
      Random random = new Random(8);
      for (int run = 0; run < 200; run++) {
        long from = random.nextInt((int) ROWS);
        int count = random.nextInt((int) (ROWS - from) + 1);
        int[] slices = new int[count + 2];
        long[] rows = new long[count + 2];
        order.locate(from, count, slices, rows, 2);
        for (int i = 0; i < count; i++) {
          assertThat(new EpochOrder.RowRef(slices[i + 2], rows[i + 2]))
              .isEqualTo(order.at(from + i));
        }
      }
    }
  }

  /**
   * What a plan marks for a run of positions is every slice a row of it sits in; exactly those
   * without shuffle, and at most the slices of the windows the run falls in with it.
   */
  @Test
  void markingARunsSlicesCoversEveryRowOfIt() {
    Random random = new Random(5);
    for (boolean shuffle : new boolean[] {false, true}) {
      for (int blockRows : new int[] {1, 64, 1000}) {
        OrderSettings settings = new OrderSettings(9, shuffle, blockRows, 3);
        EpochOrder order = new EpochOrder(SLICES, settings, 1);
        for (int trial = 0; trial < 200; trial++) {
          long from = random.nextInt((int) ROWS);
          int count = random.nextInt((int) Math.min(ROWS - from, 3000) + 1);
          boolean[] marked = new boolean[SLICES.length];
          order.markSlices(from, count, marked);
          boolean[] holding = new boolean[SLICES.length];
          for (long p = from; p < from + count; p++) {
            holding[order.at(p).slice()] = true;
          }
          for (int s = 0; s < SLICES.length; s++) {
            if (holding[s]) {
              assertThat(marked[s]).as("slice %s of [%s, +%s)", s, from, count).isTrue();
            } else if (!shuffle) {
              assertThat(marked[s]).as("slice %s of [%s, +%s)", s, from, count).isFalse();
            }
          }
          assertThat(marked[1]).as("the empty slice").isFalse();
        }
      }
    }
  }

  /**
   * Jobs registered before runs existed shuffled single rows; their orders must not change, or a
   * saved state would resume them at the wrong rows. The checksum was printed by the order as it
   * was then (commit 1aab6d9) over these settings.
   */
  @Test
  void singleRowUnitsKeepTheOrdersOfJobsRegisteredBeforeRuns() {
    long checksum = 17;
    for (long seed : new long[] {0, 11, -7}) {
      for (int blockRows : new int[] {1, 64, 100, 1000, 5000}) {
        for (int window : new int[] {1, 3, 16}) {
          for (long epoch = 0; epoch < 3; epoch++) {
            EpochOrder order =
                new EpochOrder(SLICES, new OrderSettings(seed, true, blockRows, window), epoch);
            for (long p = 0; p < order.rows(); p++) {
              EpochOrder.RowRef ref = order.at(p);
              checksum = checksum * 31 + ref.slice() * 100_003L + ref.row();
            }
          }
        }
      }
    }
    assertThat(checksum).isEqualTo(6949171288355527401L);
  }

  /**
   * With runs, a window shuffles units of {@code runRows} neighbouring rows of one block: the epoch
   * is every row once, cut into runs of consecutive rows that are whole units (shorter only where a
   * block ends), and the units still mix across the window.
   */
  @ParameterizedTest
  @ValueSource(ints = {2, 7, 16, 64})
  void runsKeepUnitsOfNeighbouringRowsTogether(int runRows) {
    for (int blockRows : new int[] {64, 100, 1000}) {
      OrderSettings settings = new OrderSettings(4, true, blockRows, 3, runRows);
      long[] rows = order(settings, 1);
      long[] sorted = rows.clone();
      Arrays.sort(sorted);
      for (int i = 0; i < sorted.length; i++) {
        assertThat(sorted[i]).isEqualTo(i);
      }
      EpochOrder order = new EpochOrder(SLICES, settings, 1);
      long units = 0;
      int p = 0;
      while (p < rows.length) {
        EpochOrder.RowRef first = order.at(p);
        // A unit starts at a multiple of runRows within its block and ends with the unit or block.
        long inBlock = first.row() % blockRows;
        assertThat(inBlock % runRows).as("unit start at position %s", p).isZero();
        long blockEnd = Math.min(first.row() - inBlock + blockRows, SLICES[first.slice()]);
        long length = Math.min(runRows, blockEnd - first.row());
        for (int t = 1; t < length; t++) {
          assertThat(order.at(p + t))
              .isEqualTo(new EpochOrder.RowRef(first.slice(), first.row() + t));
        }
        p += (int) length;
        units++;
      }
      long breaks = 0;
      for (int i = 1; i < rows.length; i++) {
        if (rows[i] != rows[i - 1] + 1) {
          breaks++;
        }
      }
      assertThat(breaks).as("units are shuffled").isGreaterThan(units / 2);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 16})
  void locatingRunsOfPositionsAgreesWithOnePositionAtATimeForRuns(int runRows) {
    // Blocks of 300 rows with units of 16 leave short units at every block's end, and slices'
    // last blocks short ones: windows whose units differ in length.
    EpochOrder order = new EpochOrder(SLICES, new OrderSettings(8, true, 300, 3, runRows), 5);
    Random random = new Random(runRows);
    for (int run = 0; run < 200; run++) {
      long from = random.nextInt((int) ROWS);
      int count = random.nextInt((int) (ROWS - from) + 1);
      int[] slices = new int[count + 1];
      long[] rows = new long[count + 1];
      order.locate(from, count, slices, rows, 1);
      for (int i = 0; i < count; i++) {
        assertThat(new EpochOrder.RowRef(slices[i + 1], rows[i + 1])).isEqualTo(order.at(from + i));
      }
    }
  }

  @Test
  void runsLongerThanABlockAreRefused() {
    assertThatThrownBy(() -> new EpochOrder(SLICES, new OrderSettings(1, true, 10, 2, 11), 0))
        .hasMessageContaining("Invalid run_rows 11");
  }

  @Test
  void rejectsANegativeEpoch() {
    assertThatThrownBy(() -> new EpochOrder(SLICES, new OrderSettings(1, true, 10, 2), -1))
        .hasMessageContaining("Invalid epoch: -1");
  }

  /**
   * Ranks read global batches through {@link RankShare}; at random points the job is checkpointed
   * (batches consumed by every rank) and resumed with another world size. Over the epoch every
   * position is read exactly once, and global batch k holds the same rows for every world size.
   */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5})
  void resumingAtOtherWorldSizesReadsEveryRowOnce(long seed) {
    resumingAtOtherWorldSizesReadsEveryRowOnce(seed, 1);
    resumingAtOtherWorldSizesReadsEveryRowOnce(seed, (int) seed * 3);
  }

  private void resumingAtOtherWorldSizesReadsEveryRowOnce(long seed, int runRows) {
    Random random = new Random(seed);
    int batchRows = 120;
    int[] worlds = {1, 2, 3, 4, 5, 6, 8, 10, 12};
    for (TailPolicy tail : TailPolicy.values()) {
      EpochShape shape = new EpochShape(ROWS, batchRows, tail);
      EpochOrder order = new EpochOrder(SLICES, new OrderSettings(seed, true, 37, 5, runRows), 1);
      List<Long> read = new ArrayList<>();
      long batch = 0;
      while (batch < shape.batches()) {
        int world = worlds[random.nextInt(worlds.length)];
        long until = Math.min(shape.batches(), batch + 1 + random.nextInt(20));
        for (; batch < until; batch++) {
          List<Long> global = new ArrayList<>();
          for (int rank = 0; rank < world; rank++) {
            List<Long> part = new ArrayList<>();
            new RankShare(shape, order, world, rank)
                .visit(batch, (slice, row) -> part.add(global(new EpochOrder.RowRef(slice, row))));
            assertThat(part).hasSize(batchRows / world);
            global.addAll(part);
          }
          assertThat(global).isEqualTo(globalBatch(shape, order, batch));
          read.addAll(global);
        }
      }
      List<Long> expected = new ArrayList<>();
      for (long slot = 0; slot < shape.batches() * batchRows; slot++) {
        expected.add(global(order.at(shape.position(slot))));
      }
      assertThat(read).containsExactlyElementsOf(expected);
      Set<Long> distinct = new HashSet<>(read);
      if (tail == TailPolicy.DROP) {
        assertThat(read).hasSize((int) (ROWS / batchRows * batchRows));
        assertThat(distinct).hasSize(read.size());
      } else {
        assertThat(read).hasSize((int) ((ROWS + batchRows - 1) / batchRows * batchRows));
        assertThat(distinct).hasSize((int) ROWS);
      }
    }
  }

  private static List<Long> globalBatch(EpochShape shape, EpochOrder order, long batch) {
    List<Long> rows = new ArrayList<>();
    new RankShare(shape, order, 1, 0)
        .visit(batch, (slice, row) -> rows.add(global(new EpochOrder.RowRef(slice, row))));
    return rows;
  }
}
