package io.floe.node;

import static io.floe.node.JobReads.flatten;
import static io.floe.node.JobReads.readEpoch;
import static io.floe.node.JobReads.sortedWithin;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.job.TailPolicy;
import io.floe.spec.DatasetSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The last, partial global batch of an epoch: {@code drop} leaves out the last positions of the
 * epoch order, {@code pad} fills the batch with the epoch's first positions again.
 *
 * <p>19,200 rows in global batches of 72 are 266 full batches and 48 rows over. The epoch order
 * does not depend on the batch size or tail policy, so a job with the same order settings and
 * batches of 24 (which divide the table and 72) reads the full order the tails are checked against.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JobTailTest {
  private static final int ROWS = 19_200;
  private static final int BATCH_ROWS = 72;
  private static final int FULL_BATCHES = ROWS / BATCH_ROWS;
  private static final int REST = ROWS % BATCH_ROWS;
  private static final String DATASET = "events";

  private ClientNode serving;
  private FloeClient client;
  private List<Long> globalOrder;

  @BeforeAll
  void start(@TempDir Path dir) {
    serving =
        ClientNode.servingEvents(dir, DATASET, 3, ROWS / 3, 8, DatasetSpec.BATCH_ROWS_DEFAULT);
    client = serving.client();
    globalOrder = JobReads.globalOrder(client, DATASET);
    assertThat(globalOrder).hasSize(ROWS);
    assertThat(REST).isEqualTo(48);
  }

  @AfterAll
  void stop() throws Exception {
    serving.close();
  }

  @Test
  void dropLeavesOutTheLastRowsOfTheGlobalOrder() {
    JobOptions options =
        JobOptions.builder("drop-in-order", DATASET, BATCH_ROWS)
            .globalOrder()
            .tail(TailPolicy.DROP)
            .build();
    assertThat(client.registerJob(options).batchesPerEpoch()).isEqualTo(FULL_BATCHES);
    for (int worldSize : new int[] {1, 3, 4}) {
      assertThat(flatten(readEpoch(client, options, 0, worldSize)))
          .as("%d ranks", worldSize)
          .isEqualTo(globalOrder.subList(0, ROWS - REST));
    }
  }

  @Test
  void padRepeatsTheFirstRowsOfTheGlobalOrder() {
    JobOptions options =
        JobOptions.builder("pad-in-order", DATASET, BATCH_ROWS)
            .globalOrder()
            .tail(TailPolicy.PAD)
            .build();
    assertThat(client.registerJob(options).batchesPerEpoch()).isEqualTo(FULL_BATCHES + 1);
    List<Long> lastBatch = new ArrayList<>(globalOrder.subList(ROWS - REST, ROWS));
    lastBatch.addAll(globalOrder.subList(0, BATCH_ROWS - REST));
    lastBatch.sort(null);
    for (int worldSize : new int[] {1, 2, 6}) {
      List<List<Long>> epoch = readEpoch(client, options, 1, worldSize);
      assertThat(epoch).as("%d ranks", worldSize).hasSize(FULL_BATCHES + 1);
      assertThat(flatten(epoch.subList(0, FULL_BATCHES)))
          .as("full batches of %d ranks", worldSize)
          .isEqualTo(globalOrder.subList(0, ROWS - REST));
      // Rows come grouped by slice inside a rank's batch, so the wrapped rows may lead.
      assertThat(sortedWithin(epoch.subList(FULL_BATCHES, FULL_BATCHES + 1)))
          .as("padded batch of %d ranks", worldSize)
          .containsExactly(lastBatch);
    }
  }

  /**
   * The epoch order read in batches of 24 (which divide both 72 and the table) gives, for every
   * group of three, the rows of one batch of 72: the tails must cut that same order.
   */
  @Test
  void shuffledTailsCutTheEpochOrder() {
    JobOptions reference =
        JobOptions.builder("fine", DATASET, 24).seed(42).blockRows(200).windowBlocks(3).build();
    List<List<Long>> fine = readEpoch(client, reference, 2, 1);
    assertThat(flatten(fine)).hasSize(ROWS).containsExactlyInAnyOrderElementsOf(globalOrder);
    assertThat(flatten(fine)).isNotEqualTo(globalOrder);
    List<List<Long>> expectedFull = JobReads.coarser(fine, 3);
    assertThat(expectedFull).hasSize(FULL_BATCHES);

    JobOptions drop =
        JobOptions.builder("shuffled-drop", DATASET, BATCH_ROWS)
            .seed(42)
            .blockRows(200)
            .windowBlocks(3)
            .tail(TailPolicy.DROP)
            .build();
    List<List<Long>> dropped = readEpoch(client, drop, 2, 2);
    assertThat(sortedWithin(dropped)).isEqualTo(expectedFull);
    assertThat(flatten(dropped)).doesNotHaveDuplicates();

    JobOptions pad =
        JobOptions.builder("shuffled-pad", DATASET, BATCH_ROWS)
            .seed(42)
            .blockRows(200)
            .windowBlocks(3)
            .tail(TailPolicy.PAD)
            .build();
    List<List<Long>> padded = readEpoch(client, pad, 2, 3);
    List<List<Long>> expected = new ArrayList<>(expectedFull);
    List<Long> last = flatten(fine.subList(FULL_BATCHES * 3, fine.size()));
    last.addAll(fine.get(0));
    expected.addAll(sortedWithin(List.of(last)));
    assertThat(sortedWithin(padded)).isEqualTo(expected);
    assertThat(JobReads.counts(flatten(padded)).values().stream().filter(c -> c == 2).count())
        .as("rows read twice")
        .isEqualTo(BATCH_ROWS - REST);
  }
}
