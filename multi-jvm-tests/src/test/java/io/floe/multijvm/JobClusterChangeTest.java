package io.floe.multijvm;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.DynamicJobReader;
import io.floe.client.FloeClient;
import io.floe.client.JobBatch;
import io.floe.client.JobOptions;
import io.floe.client.JobReader;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Training jobs while the data node that holds their entities is SIGKILLed mid-epoch: the jobs
 * recover from their replicated records on the survivors, the ranks of a deterministic job read
 * every row once, and the acknowledged batches of a dynamic job hold every row once.
 */
class JobClusterChangeTest {
  private static final long ROWS = 18_000;
  private static final int BATCH_ROWS = 120;

  @TempDir Path dir;

  @Test
  void jobsReadEveryRowOnceWhenTheNodeHoldingTheirEntitiesIsKilled() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(6, 3_000, TestRows.events(17));
    JobOptions deterministic =
        JobOptions.builder("det", "events", BATCH_ROWS)
            .seed(3)
            .blockRows(256)
            .windowBlocks(4)
            .build();
    JobOptions dynamic =
        JobOptions.builder("dyn", "events", BATCH_ROWS)
            .seed(4)
            .mode(io.floe.job.JobMode.DYNAMIC)
            .leaseTimeoutMs(5_000)
            .build();
    try (TestCluster cluster = TestCluster.start(3, ClusterChangeTest.SETTINGS);
        BufferAllocator allocator = new RootAllocator()) {
      int victim;
      try (FloeClient setup = cluster.client(allocator, 0)) {
        cluster.awaitMembers(setup, 3);
        setup.load(
            new LoadRequest(
                DatasetSpec.of("events", table.metadataLocation()).withBatchRows(250), true));
        setup.registerJob(deterministic);
        setup.registerJob(dynamic);
        victim = cluster.nodeLogging("Job 'dyn' registered");
      }
      int survivor = victim == 0 ? 1 : 0;
      try (FloeClient client = cluster.client(allocator, survivor)) {
        AtomicBoolean slow = new AtomicBoolean(true);
        AtomicLong progress = new AtomicLong();
        List<Long> deterministicIds = Collections.synchronizedList(new ArrayList<>());
        List<Long> acknowledgedIds = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Void>> readers = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
          int r = rank;
          readers.add(
              CompletableFuture.runAsync(
                  () -> {
                    try (JobReader reader = client.readJob(deterministic, 0, 2, r, 0, 1)) {
                      while (reader.hasNext()) {
                        try (JobBatch batch = reader.next()) {
                          deterministicIds.addAll(ids(batch));
                        }
                        progress.incrementAndGet();
                        pace(slow);
                      }
                    }
                  }));
        }
        for (int worker = 0; worker < 2; worker++) {
          String name = "worker-" + worker;
          readers.add(
              CompletableFuture.runAsync(
                  () -> {
                    try (DynamicJobReader reader = client.readDynamic(dynamic, 0, name)) {
                      while (reader.hasNext()) {
                        try (JobBatch batch = reader.next()) {
                          List<Long> ids = ids(batch);
                          pace(slow);
                          if (reader.ack(batch) == io.floe.protocol.AckReply.ACKNOWLEDGED) {
                            acknowledgedIds.addAll(ids);
                          }
                        }
                        progress.incrementAndGet();
                      }
                    }
                  }));
        }
        Awaitility.await()
            .atMost(java.time.Duration.ofSeconds(60))
            .until(() -> progress.get() > 20);

        cluster.node(victim).kill();
        cluster.awaitMembers(client, 2);
        slow.set(false);
        CompletableFuture.allOf(readers.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);

        assertThat(deterministicIds).as(cluster.logs()).hasSize((int) ROWS);
        assertThat(deterministicIds).doesNotHaveDuplicates();
        assertThat(acknowledgedIds).hasSize((int) ROWS);
        assertThat(acknowledgedIds).doesNotHaveDuplicates();
        assertThat(client.jobStatus("dyn").counters().rowsAcknowledged()).isEqualTo(ROWS);
      }
    }
  }

  private static void pace(AtomicBoolean slow) {
    if (slow.get()) {
      ClusterReads.sleep(100);
    }
  }

  private static List<Long> ids(JobBatch batch) {
    BigIntVector id = (BigIntVector) batch.root().getVector("id");
    List<Long> ids = new ArrayList<>(id.getValueCount());
    for (int i = 0; i < id.getValueCount(); i++) {
      ids.add(id.get(i));
    }
    return ids;
  }
}
