package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.DynamicJobReader;
import io.floe.client.FloeClient;
import io.floe.client.JobBatch;
import io.floe.client.JobOptions;
import io.floe.protocol.AckReply;
import io.floe.protocol.JobStatusReply;
import io.floe.spec.DatasetSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamic mode: workers lease whole global batches and acknowledge them. A worker that stops
 * acknowledging loses its lease after {@code lease_timeout_ms}, another worker reads that batch,
 * and the acknowledged rows of the epoch are still every row exactly once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DynamicJobTest {
  private static final int ROWS = 6_000;
  private static final int BATCH_ROWS = 80;
  private static final String DATASET = "events";

  private ClientNode serving;
  private FloeClient client;
  private List<Long> globalOrder;

  @BeforeAll
  void start(@TempDir Path dir) {
    serving =
        ClientNode.servingEvents(dir, DATASET, 2, ROWS / 2, 13, DatasetSpec.BATCH_ROWS_DEFAULT);
    client = serving.client();
    globalOrder = JobReads.globalOrder(client, DATASET);
  }

  @AfterAll
  void stop() throws Exception {
    serving.close();
  }

  private static JobOptions.Builder dynamic(String id) {
    return JobOptions.builder(id, DATASET, BATCH_ROWS)
        .mode(io.floe.job.JobMode.DYNAMIC)
        .seed(3)
        .blockRows(512);
  }

  @Test
  void aBatchWhoseLeaseExpiredIsReadByAnotherWorkerAndCountedOnce() {
    JobOptions options = dynamic("stalling").leaseTimeoutMs(500).build();
    List<Long> acknowledged = new ArrayList<>();
    Map<Long, List<Long>> batchesOfB = new HashMap<>();
    JobBatch stalled;
    try (DynamicJobReader a = client.readDynamic(options, 0, "worker-a");
        DynamicJobReader b = client.readDynamic(options, 0, "worker-b")) {
      for (int i = 0; i < 2; i++) {
        try (JobBatch batch = a.next()) {
          assertThat(batch.rows()).isEqualTo(BATCH_ROWS);
          acknowledged.addAll(JobReads.ids(batch.root()));
          assertThat(a.ack(batch)).isEqualTo(AckReply.ACKNOWLEDGED);
        }
      }
      // Worker a reads a third batch and then stops acknowledging, as a hung worker would.
      stalled = a.next();
      List<Long> stalledIds = JobReads.ids(stalled.root());
      stalled.close();

      while (b.hasNext()) {
        try (JobBatch batch = b.next()) {
          List<Long> ids = JobReads.ids(batch.root());
          assertThat(batchesOfB.put(batch.index(), ids))
              .as("batch %d again", batch.index())
              .isNull();
          acknowledged.addAll(ids);
          assertThat(b.ack(batch)).as("ack of %s", batch).isEqualTo(AckReply.ACKNOWLEDGED);
        }
      }
      assertThat(batchesOfB)
          .as("the batch worker a stalled on, as worker b read it")
          .containsEntry(stalled.index(), stalledIds);

      // The hung worker comes back and acknowledges its old lease: too late.
      assertThat(a.ack(stalled)).isIn(AckReply.EXPIRED, AckReply.DUPLICATE);
      assertThat(a.hasNext()).as("the epoch is acknowledged in full").isFalse();
    }

    assertThat(acknowledged).hasSize(ROWS).containsExactlyInAnyOrderElementsOf(globalOrder);
    JobStatusReply status = client.jobStatus(options.job());
    assertThat(status.counters().rowsReissued()).as(status.toString()).isGreaterThan(0);
    assertThat(status.counters().rowsAcknowledged()).as(status.toString()).isEqualTo(ROWS);
    assertThat(status.epochs())
        .as(status.toString())
        .anySatisfy(
            epoch -> {
              assertThat(epoch.epoch()).isZero();
              assertThat(epoch.acknowledged()).isEqualTo(ROWS / BATCH_ROWS);
            });
  }

  @Test
  void workersSharingAnEpochReadEveryRowOnce() throws Exception {
    JobOptions options = dynamic("sharing").build();
    ExecutorService threads = Executors.newFixedThreadPool(3);
    List<Future<List<Long>>> workers = new ArrayList<>();
    for (int w = 0; w < 3; w++) {
      String worker = "sharing-" + w;
      workers.add(
          threads.submit(
              () -> {
                List<Long> ids = new ArrayList<>();
                try (DynamicJobReader reader = client.readDynamic(options, 1, worker)) {
                  while (reader.hasNext()) {
                    try (JobBatch batch = reader.next()) {
                      ids.addAll(JobReads.ids(batch.root()));
                      assertThat(reader.ack(batch)).isEqualTo(AckReply.ACKNOWLEDGED);
                    }
                  }
                }
                return ids;
              }));
    }
    List<Long> all = new ArrayList<>();
    try {
      for (Future<List<Long>> worker : workers) {
        all.addAll(worker.get());
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(all).hasSize(ROWS).containsExactlyInAnyOrderElementsOf(globalOrder);
    JobStatusReply status = client.jobStatus(options.job());
    assertThat(status.counters().rowsAcknowledged()).isEqualTo(ROWS);
    assertThat(status.counters().leasesActive()).isZero();
  }
}
