package io.floe.gateway.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A part's runs visit every row exactly once, in the order the sources hold them, and cover the
 * part exactly; ordered parts make few long runs.
 */
class GatherRunsTest {
  @ParameterizedTest
  @ValueSource(longs = {1, 100, 5_000, 1L << 22, 1L << 40, Long.MAX_VALUE / 2})
  void sortsLikeAStableSortWhateverTheSpread(long spread) {
    Random random = new Random(spread);
    for (int count : new int[] {0, 1, 2, 7, 4096, 10_000}) {
      long base = random.nextLong() / 4;
      long[] keys = new long[count];
      for (int i = 0; i < count; i++) {
        keys[i] = base + Math.floorMod(random.nextLong(), spread);
      }
      Integer[] expected = IntStream.range(0, count).boxed().toArray(Integer[]::new);
      Arrays.sort(expected, Comparator.comparingLong(i -> keys[i]));
      assertThat(GatherRuns.sortedOrder(keys, count))
          .as("%s keys over %s", count, spread)
          .containsExactly(Arrays.stream(expected).mapToInt(Integer::intValue).toArray());
    }
  }

  @Test
  void aShuffledPartIsVisitedInTheSourcesOrderAndCoveredOnce() {
    int batches = 5;
    int rows = 1000;
    int[] sourceRows = new int[batches];
    long[] firstRow = new long[batches];
    for (int b = 0; b < batches; b++) {
      sourceRows[b] = rows - b; // uneven batches
      firstRow[b] = b == 0 ? 0 : firstRow[b - 1] + sourceRows[b - 1];
    }
    int[] all =
        IntStream.range(0, (int) (firstRow[batches - 1] + sourceRows[batches - 1])).toArray();
    Random random = new Random(7);
    for (int i = all.length - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int swap = all[i];
      all[i] = all[j];
      all[j] = swap;
    }
    int count = 1500;
    int[] source = new int[count];
    int[] indexIn = new int[count];
    for (int i = 0; i < count; i++) {
      int b = batches - 1;
      while (firstRow[b] > all[i]) {
        b--;
      }
      source[i] = b;
      indexIn[i] = (int) (all[i] - firstRow[b]);
    }
    GatherRuns runs = GatherRuns.of(source, indexIn, count, sourceRows, firstRow);
    boolean[] covered = new boolean[count];
    long previous = -1;
    for (int r = 0; r < runs.runs(); r++) {
      long key = firstRow[runs.source(r)] + runs.from(r);
      assertThat(key).isGreaterThan(previous);
      previous = key + runs.length(r) - 1;
      for (int t = 0; t < runs.length(r); t++) {
        int i = runs.to(r) + t;
        assertThat(covered[i]).isFalse();
        covered[i] = true;
        assertThat(source[i]).isEqualTo(runs.source(r));
        assertThat(indexIn[i]).isEqualTo(runs.from(r) + t);
      }
    }
    assertThat(covered).doesNotContain(false);
    assertThat(runs.rows()).isEqualTo(count);
  }

  @Test
  void anOrderedPartIsOneRunPerSourceBatch() {
    int[] source = {0, 0, 0, 1, 1, 2};
    int[] indexIn = {7, 8, 9, 0, 1, 0};
    GatherRuns runs =
        GatherRuns.of(source, indexIn, 6, new int[] {10, 2, 5}, new long[] {0, 10, 12});
    assertThat(runs.runs()).isEqualTo(3);
    assertThat(new int[] {runs.from(0), runs.to(0), runs.length(0)}).containsExactly(7, 0, 3);
    assertThat(new int[] {runs.from(1), runs.to(1), runs.length(1)}).containsExactly(0, 3, 2);
    assertThat(new int[] {runs.from(2), runs.to(2), runs.length(2)}).containsExactly(0, 5, 1);
  }

  @Test
  void refusesARowOutsideItsBatch() {
    assertThatThrownBy(
            () -> GatherRuns.of(new int[] {0}, new int[] {10}, 1, new int[] {10}, new long[] {0}))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("Row 10 is outside source batch 0 of 10 rows");
    assertThatThrownBy(
            () -> GatherRuns.of(new int[] {0}, new int[] {-1}, 1, new int[] {10}, new long[] {0}))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }
}
