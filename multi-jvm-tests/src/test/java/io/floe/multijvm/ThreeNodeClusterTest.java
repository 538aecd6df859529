package io.floe.multijvm;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three data-node JVMs: a dataset spreads over all of them and every row is read exactly once. */
class ThreeNodeClusterTest {
  static final Map<String, String> SETTINGS =
      Map.of(
          "floe.load.slice-target-size", "16KiB",
          "floe.security.ticket-secret", "multi-jvm-test-secret-0123456789",
          "floe.memory.limit", "512MiB",
          "floe.load.threads", "1",
          "pekko.cluster.role.data.min-nr-of-members", "2");

  @TempDir Path dir;

  @Test
  void datasetSpreadsOverAllNodesAndEveryRowIsReadOnce() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(6, 3_000, TestRows.events(13));
    long expected = 18_000;
    try (TestCluster cluster = TestCluster.start(3, SETTINGS);
        BufferAllocator allocator = new RootAllocator();
        FloeClient client0 = cluster.client(allocator, 0);
        FloeClient client2 = cluster.client(allocator, 2)) {
      cluster.awaitMembers(client0, 3);

      assertThat(
              client0
                  .load(new LoadRequest(DatasetSpec.of("events", table.metadataLocation()), true))
                  .state())
          .as(cluster.logs())
          .isEqualTo(State.READY);

      Set<String> holders = new HashSet<>();
      for (int shards : new int[] {1, 3, 4}) {
        Set<Long> ids = new HashSet<>();
        long rows = 0;
        for (int shard = 0; shard < shards; shard++) {
          // Plan through a node that need not hold the data: any node answers for the cluster.
          FlightInfo info = client2.plan("events", shard, shards);
          for (FlightEndpoint endpoint : info.getEndpoints()) {
            holders.add(endpoint.getLocations().get(0).getUri().toString());
          }
          rows +=
              client0.read(
                  info,
                  root -> {
                    BigIntVector id = (BigIntVector) root.getVector("id");
                    for (int i = 0; i < root.getRowCount(); i++) {
                      assertThat(ids.add(id.get(i))).as("id %d read twice", id.get(i)).isTrue();
                    }
                  });
        }
        assertThat(rows).as("rows over %d shards", shards).isEqualTo(expected);
        assertThat(ids).hasSize((int) expected);
      }
      assertThat(holders)
          .as("slices are held on every node")
          .containsExactlyInAnyOrder(
              cluster.nodes().stream()
                  .map(n -> n.location().getUri().toString())
                  .toArray(String[]::new));
      // HTTP/1.1 as Kubernetes probes speak it (no h2c upgrade attempt).
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      for (int node = 0; node < 3; node++) {
        try (FloeClient each = cluster.client(allocator, node)) {
          assertThat(each.status("events").state()).isEqualTo(State.READY);
        }
        for (String route : new String[] {"/alive", "/ready"}) {
          HttpResponse<String> health =
              http.send(
                  HttpRequest.newBuilder(cluster.node(node).management().resolve(route)).build(),
                  HttpResponse.BodyHandlers.ofString());
          assertThat(health.statusCode())
              .as("%s on node %d: %s", route, node, health.body())
              .isEqualTo(200);
        }
      }
    }
  }
}
