package io.floe.node;

import static io.floe.node.JobReads.flatten;
import static io.floe.node.JobReads.sortedWithin;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.client.JobBatch;
import io.floe.client.JobOptions;
import io.floe.client.JobReader;
import io.floe.dataset.SliceEntity;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.sharding.ShardRegion.ClusterShardingStats;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingQuery;
import org.apache.pekko.cluster.sharding.typed.GetClusterShardingStats;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two nodes in one JVM hold the slices of a dataset; one of them leaves while two ranks are in the
 * middle of an epoch. The ranks go on through plans that name the departed node, slices that are
 * reloading and (when its entity lived there) a job the cluster forgot, and still read every global
 * batch exactly once with the rows a reading before the change gave.
 */
class JobReadAcrossANodeLeavingTest {
  private static final int ROWS = 19_200;
  private static final int BATCH_ROWS = 96;

  @TempDir Path dir;

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static String clusterOf(int port, int seedPort) {
    return "pekko.remote.artery.canonical.port = "
        + port
        + "\npekko.cluster.seed-nodes = [\"pekko://floe@127.0.0.1:"
        + seedPort
        + "\"]\npekko.cluster.role.data.min-nr-of-members = 1"
        + "\nfloe.load.retire-linger = 1s\n";
  }

  @Test
  void ranksReadEveryBatchOnceWhileANodeLeaves() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(4, ROWS / 4, TestRows.events(17));
    int seedPort = freePort();
    FloeNode staying = TestNodes.start(clusterOf(seedPort, seedPort));
    FloeNode leaving = TestNodes.start(clusterOf(freePort(), seedPort));
    try (BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, staying.location())) {
      client.awaitMembers(2, Duration.ofSeconds(60));
      // Members are Up before their slice regions register; a load before that would place every
      // slice on the first node.
      Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> sliceRegions(staying) == 2);
      client.load(new LoadRequest(DatasetSpec.of("events", table.metadataLocation()), true));
      Set<String> holders = new HashSet<>();
      for (FlightEndpoint endpoint : client.plan("events", 0, 1).getEndpoints()) {
        holders.add(endpoint.getLocations().get(0).getUri().toString());
      }
      assertThat(holders).as("nodes holding slices").hasSize(2);

      List<JobOptions> jobs = new ArrayList<>();
      List<List<List<Long>>> references = new ArrayList<>();
      for (int j = 0; j < 4; j++) {
        JobOptions options =
            JobOptions.builder("leaving-" + j, "events", BATCH_ROWS)
                .seed(j)
                .blockRows(512)
                .windowBlocks(2)
                .build();
        jobs.add(options);
        references.add(JobReads.readEpoch(client, options, 0, 1));
      }

      List<List<JobReader>> ranks = new ArrayList<>();
      List<List<List<Long>>> read = new ArrayList<>();
      for (JobOptions options : jobs) {
        List<JobReader> readers = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
          readers.add(
              client
                  .jobReader(options)
                  .epoch(0)
                  .worldSize(2)
                  .rank(rank)
                  .chunkBatches(3)
                  .patience(Duration.ofSeconds(90))
                  .open());
        }
        ranks.add(readers);
        read.add(new ArrayList<>());
      }
      try {
        // A quarter of the epoch before, a quarter while the node hands its slices and jobs
        // over, the rest once it is gone.
        int quarter = ROWS / BATCH_ROWS / 4;
        for (int j = 0; j < jobs.size(); j++) {
          readBatches(ranks.get(j), read.get(j), quarter);
        }
        CompletableFuture<Void> departure = new CompletableFuture<>();
        Thread leaver =
            new Thread(
                () -> {
                  leaving.close();
                  departure.complete(null);
                },
                "node-leaving");
        leaver.start();
        for (int j = 0; j < jobs.size(); j++) {
          readBatches(ranks.get(j), read.get(j), quarter);
        }
        departure.get(120, TimeUnit.SECONDS);
        for (int j = 0; j < jobs.size(); j++) {
          readBatches(ranks.get(j), read.get(j), Integer.MAX_VALUE);
        }
      } finally {
        ranks.forEach(readers -> readers.forEach(JobReader::close));
      }

      for (int j = 0; j < jobs.size(); j++) {
        assertThat(sortedWithin(read.get(j)))
            .as("job %s", jobs.get(j).job())
            .isEqualTo(sortedWithin(references.get(j)));
        assertThat(flatten(read.get(j))).hasSize(ROWS).doesNotHaveDuplicates();
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    } finally {
      leaving.close();
      staying.close();
    }
  }

  private static int sliceRegions(FloeNode node) throws Exception {
    ClusterShardingStats stats =
        AskPattern.<ClusterShardingQuery, ClusterShardingStats>ask(
                ClusterSharding.get(node.system()).shardState(),
                replyTo ->
                    new GetClusterShardingStats(
                        SliceEntity.TYPE_KEY, Duration.ofSeconds(2), replyTo),
                Duration.ofSeconds(5),
                node.system().scheduler())
            .toCompletableFuture()
            .get();
    return stats.getRegions().size();
  }

  /** Reads up to {@code count} global batches from both ranks in lock-step, as DDP would. */
  private static void readBatches(List<JobReader> readers, List<List<Long>> into, int count) {
    for (int i = 0; i < count && readers.get(0).hasNext(); i++) {
      List<Long> global = new ArrayList<>();
      for (JobReader reader : readers) {
        try (JobBatch batch = reader.next()) {
          assertThat(batch.index()).isEqualTo(into.size());
          global.addAll(JobReads.ids(batch.root()));
        }
      }
      into.add(global);
    }
  }
}
