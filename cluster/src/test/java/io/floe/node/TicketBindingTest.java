package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.dataset.SliceEntity;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.Json;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
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
 * Tickets bound to the caller that planned them, on a two-node cluster with tokens: reader A's
 * slice and job tickets, planned through one node, are served to A by both nodes and refused to
 * reader B (PERMISSION_DENIED, {@code TICKET_WRONG_CALLER}) whatever its role, before any row is
 * sent; with tokens off tickets carry no caller and anyone reads them, as before.
 */
class TicketBindingTest {
  private static final String READER_A = "reader-a-token-0123456789abcdef";
  private static final String READER_B = "reader-b-token-0123456789abcdef";
  private static final String ADMIN = "admin-token-0123456789abcdef";

  @TempDir Path dir;

  @Test
  void aTicketIsServedToTheCallerThatPlannedItOnAnyNodeAndRefusedToOthers() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(4, 500, TestRows.events(7));
    Path tokens = dir.resolve("tokens");
    Files.writeString(
        tokens,
        String.join(
            "\n",
            "reader reader-a " + READER_A + " tenant=team-a",
            "reader reader-b " + READER_B + " tenant=team-a",
            "admin root " + ADMIN,
            ""));
    String auth =
        "floe.security.auth.anonymous = none\nfloe.security.auth.tokens-file = \""
            + tokens
            + "\"\n";
    int seedPort = freePort();
    FloeNode first = TestNodes.start(auth + clusterOf(seedPort, seedPort));
    FloeNode second = TestNodes.start(auth + clusterOf(freePort(), seedPort));
    try (BufferAllocator allocator = new RootAllocator();
        FloeClient admin = FloeClient.connect(allocator, first.location(), ADMIN);
        FloeClient a = FloeClient.connect(allocator, first.location(), READER_A);
        FlightClient raw = FlightClient.builder(allocator, first.location()).build()) {
      admin.awaitMembers(2, Duration.ofSeconds(60));
      Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> sliceRegions(first) == 2);
      admin.load(new LoadRequest(DatasetSpec.of("events", table.metadataLocation()), true));

      // Slice tickets planned through the first node, held by both.
      FlightInfo plan = a.plan("events", 0, 1);
      Set<Location> holders = new HashSet<>();
      for (FlightEndpoint endpoint : plan.getEndpoints()) {
        holders.add(endpoint.getLocations().get(0));
        ObjectNode ticket = Json.parseObject(endpoint.getTicket().getBytes(), "ticket");
        assertThat(ticket.get("caller").toString())
            .isEqualTo("{\"tenant\":\"team-a\",\"name\":\"reader-a\"}");
      }
      assertThat(holders).as("nodes holding slices").hasSize(2);
      long rows = 0;
      for (FlightEndpoint endpoint : plan.getEndpoints()) {
        try (FlightClient holder =
            FlightClient.builder(allocator, endpoint.getLocations().get(0)).build()) {
          assertWrongCaller(holder, endpoint.getTicket(), READER_B, "'reader-b'");
          assertWrongCaller(holder, endpoint.getTicket(), ADMIN, "'root' of tenant 'default'");
          rows += rows(holder, endpoint.getTicket(), READER_A);
        }
      }
      assertThat(rows).isEqualTo(2_000);

      // A job ticket, planned by A: B may plan the same job's read itself, not use A's ticket.
      a.registerJob(JobOptions.builder("bound-job", "events", 100).build());
      FlightDescriptor command =
          FlightDescriptor.command(
              "{\"job\": \"bound-job\", \"epoch\": 0, \"world_size\": 1, \"rank\": 0}"
                  .getBytes(StandardCharsets.UTF_8));
      List<FlightEndpoint> jobEndpoints = raw.getInfo(command, bearer(READER_A)).getEndpoints();
      long jobRows = 0;
      for (FlightEndpoint endpoint : jobEndpoints) {
        try (FlightClient holder =
            FlightClient.builder(allocator, endpoint.getLocations().get(0)).build()) {
          assertWrongCaller(holder, endpoint.getTicket(), READER_B, "'reader-a' of tenant");
          jobRows += rows(holder, endpoint.getTicket(), READER_A);
        }
      }
      assertThat(jobRows).isEqualTo(2_000);
      long bRows = 0;
      for (FlightEndpoint endpoint : raw.getInfo(command, bearer(READER_B)).getEndpoints()) {
        try (FlightClient holder =
            FlightClient.builder(allocator, endpoint.getLocations().get(0)).build()) {
          bRows += rows(holder, endpoint.getTicket(), READER_B);
        }
      }
      assertThat(bRows).isEqualTo(2_000);

      // Taking the caller out of A's ticket breaks its signature.
      ObjectNode unbound =
          Json.parseObject(plan.getEndpoints().get(0).getTicket().getBytes(), "ticket");
      unbound.remove("caller");
      try (FlightClient holder =
          FlightClient.builder(allocator, plan.getEndpoints().get(0).getLocations().get(0))
              .build()) {
        assertThatThrownBy(() -> rows(holder, new Ticket(Json.bytes(unbound)), READER_B))
            .isInstanceOfSatisfying(
                FlightRuntimeException.class,
                e -> {
                  assertThat(ErrorCode.of(e)).contains(ErrorCode.TICKET_INVALID);
                  assertThat(e.getMessage()).contains("signature does not match");
                });
      }
    } finally {
      second.close();
      first.close();
    }
  }

  @Test
  void withoutTokensTicketsNameNoCallerAndAnyoneReadsThem() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 500, TestRows.events(8));
    try (FloeNode node = TestNodes.start();
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location());
        FlightClient other = FlightClient.builder(allocator, node.location()).build()) {
      client.load(new LoadRequest(DatasetSpec.of("events", table.metadataLocation()), true));
      long rows = 0;
      for (FlightEndpoint endpoint : client.plan("events", 0, 1).getEndpoints()) {
        ObjectNode ticket = Json.parseObject(endpoint.getTicket().getBytes(), "ticket");
        assertThat(ticket.fieldNames())
            .toIterable()
            .containsExactly("kind", "dataset", "slice", "from", "to", "expires", "sig");
        rows += rows(other, endpoint.getTicket(), null);
      }
      assertThat(rows).isEqualTo(1_000);
    }
  }

  private static void assertWrongCaller(
      FlightClient holder, Ticket ticket, String token, String said) {
    assertThatThrownBy(() -> rows(holder, ticket, token))
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code())
                  .as(e.getMessage())
                  .isEqualTo(FlightStatusCode.UNAUTHORIZED);
              assertThat(ErrorCode.of(e)).contains(ErrorCode.TICKET_WRONG_CALLER);
              assertThat(e.status().description())
                  .contains("planned by 'reader-a' of tenant 'team-a'", said);
            });
  }

  private static long rows(FlightClient client, Ticket ticket, String token) throws Exception {
    long rows = 0;
    CallOption[] options = token == null ? new CallOption[0] : new CallOption[] {bearer(token)};
    try (FlightStream stream = client.getStream(ticket, options)) {
      while (stream.next()) {
        rows += stream.getRoot().getRowCount();
      }
    }
    return rows;
  }

  private static CallOption bearer(String token) {
    FlightCallHeaders headers = new FlightCallHeaders();
    headers.insert("authorization", "Bearer " + token);
    return new HeaderCallOption(headers);
  }

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
        + "\"]\npekko.cluster.role.data.min-nr-of-members = 1\n";
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
}
