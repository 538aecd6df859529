package io.floe.node;

import static io.floe.node.JobReads.flatten;
import static io.floe.node.JobReads.readEpoch;
import static io.floe.node.JobReads.readGlobal;
import static io.floe.node.JobReads.sortedWithin;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.client.JobBatch;
import io.floe.client.JobCheckpoint;
import io.floe.client.JobOptions;
import io.floe.client.JobReader;
import io.floe.protocol.JobStatusReply;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Deterministic epochs through a real node and the Java client: the global batches of an epoch do
 * not depend on how many ranks read them, so a run can change its world size at any batch and still
 * read every row exactly once, in the order a single rank would have.
 *
 * <p>The table has 19,200 rows, a multiple of both batch sizes used here (96 and 120, each
 * divisible by 1, 2, 3, 4 and 6), so every epoch covers the table exactly.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JobEpochTest {
  private static final int ROWS = 19_200;
  private static final String DATASET = "events";
  private static final int[] WORLD_SIZES = {1, 2, 3, 4, 6};

  private ClientNode serving;
  private FloeClient client;
  private List<Long> globalOrder;

  @BeforeAll
  void start(@TempDir Path dir) {
    serving = ClientNode.servingEvents(dir, DATASET, 4, ROWS / 4, 5, 1_000);
    client = serving.client();
    globalOrder = JobReads.globalOrder(client, DATASET);
    assertThat(globalOrder).hasSize(ROWS).doesNotHaveDuplicates();
  }

  @AfterAll
  void stop() throws Exception {
    serving.close();
  }

  private JobOptions.Builder job(String id, int batchRows) {
    return JobOptions.builder(id, DATASET, batchRows);
  }

  private void assertEveryRowOnce(List<List<Long>> epoch) {
    List<Long> ids = flatten(epoch);
    assertThat(ids).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(globalOrder);
  }

  @Test
  void globalBatchesAreTheSameForEveryWorldSize() {
    JobOptions options = job("any-world", 120).seed(7).blockRows(256).windowBlocks(4).build();
    List<List<Long>> single = readEpoch(client, options, 0, 1);
    assertThat(single).hasSize(ROWS / 120);
    assertEveryRowOnce(single);
    for (int worldSize : new int[] {2, 3, 4, 6}) {
      assertThat(sortedWithin(readEpoch(client, options, 0, worldSize)))
          .as("global batches read by %d ranks", worldSize)
          .isEqualTo(sortedWithin(single));
    }
  }

  /**
   * A run reads at one world size for a while, checkpoints, goes on at another, and finishes at a
   * third; the resume points and world sizes are drawn from the seed. Readers of the first two
   * stretches are closed mid-chunk, as a job that is stopped would be.
   */
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {3, 17, 29, 101})
  void worldSizeChangesAtAnyBatchReadEveryRowOnceInTheSameOrder(long seed) {
    Random random = new Random(seed);
    int batchRows = random.nextBoolean() ? 96 : 120;
    int epoch = random.nextInt(3);
    JobOptions options =
        job("resume-" + seed, batchRows)
            .seed(seed)
            .blockRows(new int[] {32, 256, 4096}[random.nextInt(3)])
            .windowBlocks(new int[] {1, 3, 16}[random.nextInt(3)])
            .build();
    List<List<Long>> reference = readEpoch(client, options, epoch, 1);
    int batches = reference.size();
    assertThat(batches).isEqualTo(ROWS / batchRows);

    long firstStop = random.nextInt(batches + 1);
    long secondStop = firstStop + random.nextInt(batches - (int) firstStop + 1);
    int[] worlds = new int[3];
    for (int i = 0; i < worlds.length; i++) {
      worlds[i] = WORLD_SIZES[random.nextInt(WORLD_SIZES.length)];
    }

    JobStatusReply status = client.registerJob(options);
    JobCheckpoint checkpoint = JobCheckpoint.start(options, status, epoch);
    List<List<Long>> run = new ArrayList<>();
    run.addAll(readGlobal(client, options, epoch, worlds[0], 0, firstStop));
    checkpoint = checkpoint.advance(firstStop);
    run.addAll(
        readGlobal(
            client,
            options,
            epoch,
            worlds[1],
            checkpoint.batchesConsumed(),
            secondStop - firstStop));
    checkpoint = JobCheckpoint.fromJson(checkpoint.advance(secondStop - firstStop).toJson());
    assertThat(checkpoint.batchesConsumed()).isEqualTo(secondStop);
    run.addAll(resumeToTheEnd(checkpoint, options, worlds[2]));

    assertThat(sortedWithin(run))
        .as(
            "batch_rows %d, epoch %d: %d ranks to %d, %d ranks to %d, %d ranks to %d",
            batchRows, epoch, worlds[0], firstStop, worlds[1], secondStop, worlds[2], batches)
        .isEqualTo(sortedWithin(reference));
    assertEveryRowOnce(run);
  }

  /** Every rank resumes from the checkpoint; global batch k joins every rank's batch k. */
  private List<List<Long>> resumeToTheEnd(
      JobCheckpoint checkpoint, JobOptions options, int worldSize) {
    List<List<List<Long>>> ranks = new ArrayList<>();
    for (int rank = 0; rank < worldSize; rank++) {
      List<List<Long>> batches = new ArrayList<>();
      try (JobReader reader = checkpoint.resume(client, options, worldSize, rank)) {
        assertThat(reader.nextBatch()).isEqualTo(checkpoint.batchesConsumed());
        while (reader.hasNext()) {
          try (JobBatch batch = reader.next()) {
            batches.add(JobReads.ids(batch.root()));
          }
        }
        assertThat(reader.checkpoint().batchesConsumed()).isEqualTo(reader.batchesPerEpoch());
      }
      ranks.add(batches);
    }
    List<List<Long>> global = new ArrayList<>();
    for (int k = 0; k < ranks.get(0).size(); k++) {
      List<Long> batch = new ArrayList<>();
      for (List<List<Long>> rank : ranks) {
        batch.addAll(rank.get(k));
      }
      global.add(batch);
    }
    return global;
  }

  @Test
  void eachEpochHasItsOwnOrderAndTheSameSettingsRepeatIt() {
    JobOptions options = job("epochs", 96).seed(11).blockRows(128).windowBlocks(4).build();
    List<List<Long>> firstBatches = readEpoch(client, options, 0, 2);
    List<Long> first = flatten(firstBatches);
    List<List<Long>> secondBatches = readEpoch(client, options, 1, 2);
    List<Long> second = flatten(secondBatches);
    List<Long> firstAgain = flatten(readEpoch(client, options, 0, 2));
    List<List<Long>> firstByThree = readEpoch(client, options, 0, 3);
    JobOptions sameSettingsOtherJob =
        job("epochs-twin", 96).seed(11).blockRows(128).windowBlocks(4).build();
    List<List<Long>> otherJob = readEpoch(client, sameSettingsOtherJob, 0, 1);
    List<List<Long>> otherSeed =
        readEpoch(
            client, job("epochs-seed", 96).seed(12).blockRows(128).windowBlocks(4).build(), 0, 1);
    List<List<Long>> inOrder = new ArrayList<>();
    for (int from = 0; from < ROWS; from += 96) {
      inOrder.add(globalOrder.subList(from, from + 96));
    }

    assertThat(first).containsExactlyInAnyOrderElementsOf(globalOrder);
    assertThat(second).containsExactlyInAnyOrderElementsOf(globalOrder);
    // Compared as the rows of each global batch, which do not depend on the world size.
    assertThat(sortedWithin(firstBatches))
        .as("a shuffled epoch against the global order")
        .isNotEqualTo(sortedWithin(inOrder));
    assertThat(sortedWithin(secondBatches))
        .as("epoch 1 against epoch 0")
        .isNotEqualTo(sortedWithin(firstBatches));
    assertThat(firstAgain).as("epoch 0 read again").isEqualTo(first);
    assertThat(sortedWithin(firstByThree))
        .as("epoch 0 by three ranks")
        .isEqualTo(sortedWithin(firstBatches));
    assertThat(sortedWithin(otherJob))
        .as("another job with the same settings")
        .isEqualTo(sortedWithin(firstBatches));
    assertThat(sortedWithin(otherSeed)).as("another seed").isNotEqualTo(sortedWithin(firstBatches));
  }

  @Test
  void withoutShuffleEveryEpochIsTheGlobalOrder() {
    JobOptions options = job("in-order", 96).globalOrder().seed(5).build();
    for (int epoch : new int[] {0, 2}) {
      assertThat(flatten(readEpoch(client, options, epoch, 3)))
          .as("epoch %d", epoch)
          .isEqualTo(globalOrder);
    }
  }

  @Test
  void aStepReadsEveryStepthBatch() {
    JobOptions options = job("stepped", 120).seed(9).blockRows(512).build();
    List<List<Long>> all = readEpoch(client, options, 0, 1);
    List<List<Long>> odd = new ArrayList<>();
    try (JobReader reader = client.readJob(options, 0, 1, 0, 1, 2)) {
      long expected = 1;
      while (reader.hasNext()) {
        try (JobBatch batch = reader.next()) {
          assertThat(batch.index()).isEqualTo(expected);
          expected += 2;
          odd.add(JobReads.ids(batch.root()));
        }
      }
    }
    List<List<Long>> expected = new ArrayList<>();
    for (int k = 1; k < all.size(); k += 2) {
      expected.add(all.get(k));
    }
    assertThat(odd).isEqualTo(expected);
  }

  /**
   * A job the cluster no longer knows (here dropped mid-epoch; in production its entity was lost
   * with its node) is registered again by the reader, which goes on from the next batch.
   */
  @Test
  void aReaderRegistersAForgottenJobAgainAndGoesOn() {
    JobOptions options = job("forgotten", 120).seed(21).blockRows(256).windowBlocks(2).build();
    List<List<Long>> reference = readEpoch(client, options, 0, 1);
    List<List<Long>> read = new ArrayList<>();
    try (JobReader reader =
        client.jobReader(options).epoch(0).chunkBatches(JobReads.CHUNK_BATCHES).open()) {
      for (int i = 0; i < JobReads.CHUNK_BATCHES + 3 && reader.hasNext(); i++) {
        try (JobBatch batch = reader.next()) {
          read.add(JobReads.ids(batch.root()));
        }
      }
      assertThat(client.dropJob(options.job()).dropped()).isTrue();
      while (reader.hasNext()) {
        try (JobBatch batch = reader.next()) {
          read.add(JobReads.ids(batch.root()));
        }
      }
    }
    assertThat(read).isEqualTo(reference);
    assertThat(client.jobStatus(options.job()).job()).isEqualTo(options.job());
  }
}
