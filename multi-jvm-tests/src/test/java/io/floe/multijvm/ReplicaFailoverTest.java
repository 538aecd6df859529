package io.floe.multijvm;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.client.JobBatch;
import io.floe.client.JobOptions;
import io.floe.client.JobReader;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three data-node JVMs holding a dataset of two replicas: each slice is on two different nodes, and
 * when the node holding the most first copies is killed mid-epoch, the Java client's job reader and
 * shard reader go on from the copies and read every row exactly once. The cluster is told to notice
 * the death only after a minute, so readers that finish with the victim still a member did not wait
 * for the failure detector.
 */
class ReplicaFailoverTest {
  private static final long ROWS = 18_000;
  private static final Map<String, String> SETTINGS = settings();

  private static Map<String, String> settings() {
    Map<String, String> settings = new HashMap<>(ThreeNodeClusterTest.SETTINGS);
    settings.put("pekko.cluster.failure-detector.acceptable-heartbeat-pause", "60s");
    return settings;
  }

  @TempDir Path dir;

  @Test
  void readersGoOnFromTheCopiesWhenANodeIsKilled() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(6, 3_000, TestRows.events(21));
    JobOptions job = JobOptions.builder("replicated", "events", 600).seed(9).build();
    try (TestCluster cluster = TestCluster.start(3, SETTINGS);
        BufferAllocator allocator = new RootAllocator()) {
      Map<String, Integer> firstCopies = new HashMap<>();
      try (FloeClient setup = cluster.client(allocator, 0)) {
        cluster.awaitMembers(setup, 3);
        assertThat(
                setup
                    .load(
                        new LoadRequest(
                            DatasetSpec.of("events", table.metadataLocation())
                                .withBatchRows(300)
                                .withReplicas(2),
                            true))
                    .state())
            .as(cluster.logs())
            .isEqualTo(State.READY);
        for (FlightEndpoint endpoint : setup.plan("events", 0, 1).getEndpoints()) {
          Set<String> holders = new HashSet<>();
          endpoint.getLocations().forEach(l -> holders.add(l.getUri().toString()));
          assertThat(holders).as("the nodes of one slice's copies").hasSize(2);
          firstCopies.merge(endpoint.getLocations().get(0).getUri().toString(), 1, Integer::sum);
        }
        setup.registerJob(job);
      }
      String busiest =
          firstCopies.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
      int victim = indexOf(cluster, busiest);
      int survivor = victim == 0 ? 1 : 0;
      try (FloeClient client = cluster.client(allocator, survivor);
          JobReader reader =
              client.jobReader(job).chunkBatches(2).patience(Duration.ofMinutes(2)).open()) {
        List<Long> jobIds = new ArrayList<>();
        int batches = 0;
        int members = 0;
        while (reader.hasNext()) {
          try (JobBatch batch = reader.next()) {
            jobIds.addAll(ids((BigIntVector) batch.root().getVector("id")));
          }
          if (++batches == 5) {
            cluster.node(victim).kill();
            List<Long> plainIds = new ArrayList<>();
            long rows =
                client.readShard(
                    "events",
                    0,
                    1,
                    Duration.ofMinutes(2),
                    root -> plainIds.addAll(ids((BigIntVector) root.getVector("id"))));
            assertThat(rows).isEqualTo(ROWS);
            assertThat(new HashSet<>(plainIds)).hasSize((int) ROWS);
          } else if (batches == 11) {
            // The shard read and three chunks of the job read since the kill, from every node's
            // slices (the victim held the most first copies).
            members = client.cluster().members().size();
          }
        }
        assertThat(jobIds).as(cluster.logs()).hasSize((int) ROWS).doesNotHaveDuplicates();
        assertThat(members)
            .as("the killed node was still a member: nobody waited for it to be downed")
            .isEqualTo(3);
      }
    }
  }

  private static int indexOf(TestCluster cluster, String location) {
    for (int i = 0; i < cluster.nodes().size(); i++) {
      Location node = cluster.node(i).location();
      if (node.getUri().toString().equals(location)) {
        return i;
      }
    }
    throw new AssertionError("No node at " + location);
  }

  private static List<Long> ids(BigIntVector id) {
    List<Long> ids = new ArrayList<>(id.getValueCount());
    for (int i = 0; i < id.getValueCount(); i++) {
      ids.add(id.get(i));
    }
    return ids;
  }
}
