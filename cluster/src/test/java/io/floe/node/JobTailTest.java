package io.floe.node;

import static io.floe.node.JobReads.flatten;
import static io.floe.node.JobReads.readEpoch;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.client.JobOptions.Tail;
import io.floe.dataset.DatasetSpec;
import io.floe.protocol.LoadRequest;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
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
 * batches of 96 (which divide the table) reads the full order the tails are checked against.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JobTailTest {
  private static final int ROWS = 19_200;
  private static final int BATCH_ROWS = 72;
  private static final int FULL_BATCHES = ROWS / BATCH_ROWS;
  private static final int REST = ROWS % BATCH_ROWS;
  private static final String DATASET = "events";

  private FloeNode node;
  private BufferAllocator allocator;
  private FloeClient client;
  private List<Long> globalOrder;

  @BeforeAll
  void start(@TempDir Path dir) {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(3, ROWS / 3, TestRows.events(8));
    node = TestNodes.start();
    allocator = new RootAllocator();
    client = FloeClient.connect(allocator, node.location());
    client.load(new LoadRequest(DatasetSpec.of(DATASET, table.metadataLocation()), true));
    globalOrder = JobReads.globalOrder(client, DATASET);
    assertThat(globalOrder).hasSize(ROWS);
    assertThat(REST).isEqualTo(48);
  }

  @AfterAll
  void stop() throws Exception {
    client.close();
    assertThat(allocator.getAllocatedMemory()).as(allocator.toVerboseString()).isZero();
    allocator.close();
    node.close();
  }

  @Test
  void dropLeavesOutTheLastRowsOfTheGlobalOrder() {
    JobOptions options =
        JobOptions.builder("drop-in-order", DATASET, BATCH_ROWS)
            .globalOrder()
            .tail(Tail.DROP)
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
            .tail(Tail.PAD)
            .build();
    assertThat(client.registerJob(options).batchesPerEpoch()).isEqualTo(FULL_BATCHES + 1);
    List<Long> expected = new ArrayList<>(globalOrder);
    expected.addAll(globalOrder.subList(0, BATCH_ROWS - REST));
    for (int worldSize : new int[] {1, 2, 6}) {
      assertThat(flatten(readEpoch(client, options, 1, worldSize)))
          .as("%d ranks", worldSize)
          .isEqualTo(expected);
    }
  }

  @Test
  void shuffledTailsCutTheEpochOrder() {
    JobOptions.Builder order = JobOptions.builder("full", DATASET, 96).seed(42).blockRows(200);
    List<Long> epochOrder = flatten(readEpoch(client, order.build(), 2, 1));
    assertThat(epochOrder).hasSize(ROWS).containsExactlyInAnyOrderElementsOf(globalOrder);
    assertThat(epochOrder).isNotEqualTo(globalOrder);

    JobOptions drop =
        JobOptions.builder("shuffled-drop", DATASET, BATCH_ROWS)
            .seed(42)
            .blockRows(200)
            .tail(Tail.DROP)
            .build();
    List<Long> dropped = flatten(readEpoch(client, drop, 2, 2));
    assertThat(dropped).doesNotHaveDuplicates().isEqualTo(epochOrder.subList(0, ROWS - REST));

    JobOptions pad =
        JobOptions.builder("shuffled-pad", DATASET, BATCH_ROWS)
            .seed(42)
            .blockRows(200)
            .tail(Tail.PAD)
            .build();
    List<Long> padded = flatten(readEpoch(client, pad, 2, 3));
    List<Long> expected = new ArrayList<>(epochOrder);
    expected.addAll(epochOrder.subList(0, BATCH_ROWS - REST));
    assertThat(padded).isEqualTo(expected);
    assertThat(JobReads.counts(padded).values().stream().filter(c -> c == 2).count())
        .as("rows read twice")
        .isEqualTo(BATCH_ROWS - REST);
  }
}
