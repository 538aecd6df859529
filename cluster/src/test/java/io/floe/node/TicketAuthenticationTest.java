package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.client.FloeClient;
import io.floe.protocol.Json;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import io.floe.ticket.FloeTicket;
import io.floe.ticket.TicketSigner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tickets are signed: altered, forged or expired ones get UNAUTHENTICATED and nothing else. */
class TicketAuthenticationTest {
  @TempDir Path dir;

  @Test
  void onlyUnalteredUnexpiredTicketsOfThisClusterAreServed() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 500, TestRows.events(3));
    try (FloeNode node = TestNodes.start();
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location());
        FlightClient raw = FlightClient.builder(allocator, node.location()).build()) {
      client.load(new LoadRequest(DatasetSpec.of("events", table.metadataLocation()), true));
      FlightEndpoint endpoint = client.plan("events", 0, 1).getEndpoints().get(0);
      FloeTicket planned = FloeTicket.parse(endpoint.getTicket());
      assertThat(rows(raw, endpoint.getTicket())).isEqualTo(planned.rows());

      // Altered: ask for more rows than the signature covers.
      ObjectNode altered = Json.parseObject(endpoint.getTicket().getBytes(), "ticket");
      altered.put("to", planned.to() + 1);
      assertUnauthenticated(raw, new Ticket(Json.bytes(altered)), "does not match");

      // Forged: signed with another secret.
      TicketSigner stranger =
          new TicketSigner(
              "not-this-cluster-secret-000000".getBytes(StandardCharsets.UTF_8),
              Duration.ofHours(1));
      assertUnauthenticated(raw, stranger.sign(planned), "does not match");

      // Expired: signed with the right secret seven hours ago, with a six-hour lifetime.
      TicketSigner past =
          new TicketSigner(
              TestNodes.TICKET_SECRET.getBytes(StandardCharsets.UTF_8),
              Duration.ofHours(6),
              Clock.fixed(Instant.now().minus(Duration.ofHours(7)), ZoneOffset.UTC));
      assertUnauthenticated(raw, past.sign(planned), "expired");

      // The node goes on serving the genuine ticket.
      assertThat(rows(raw, endpoint.getTicket())).isEqualTo(planned.rows());
    }
  }

  @Test
  void jobTicketsCannotBeAlteredToReadOtherRowsOrColumns() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 400, TestRows.events(5));
    try (FloeNode node = TestNodes.start();
        BufferAllocator allocator = new RootAllocator();
        FloeClient client = FloeClient.connect(allocator, node.location());
        FlightClient raw = FlightClient.builder(allocator, node.location()).build()) {
      client.load(new LoadRequest(DatasetSpec.of("events", table.metadataLocation()), true));
      action(
          raw,
          "register_job",
          "{\"job\": \"j\", \"dataset\": \"events\", \"batch_rows\": 40,"
              + " \"columns\": [\"id\"], \"block_rows\": 64, \"window_blocks\": 2}");
      FlightEndpoint endpoint =
          raw.getInfo(
                  FlightDescriptor.command(
                      ("{\"job\": \"j\", \"epoch\": 0, \"world_size\": 2, \"rank\": 0,"
                              + " \"batch_from\": 0, \"batch_to\": 3}")
                          .getBytes(StandardCharsets.UTF_8)))
              .getEndpoints()
              .get(0);
      long genuine = rows(raw, endpoint.getTicket());
      assertThat(genuine).isPositive();

      for (String[] change :
          new String[][] {
            {"rank", "1"}, {"world_size", "1"}, {"batch_to", "20"}, {"epoch", "1"}, {"seed", "9"}
          }) {
        ObjectNode altered = Json.parseObject(endpoint.getTicket().getBytes(), "ticket");
        altered.put(change[0], Long.parseLong(change[1]));
        assertUnauthenticated(raw, new Ticket(Json.bytes(altered)), "does not match");
      }
      ObjectNode moreColumns = Json.parseObject(endpoint.getTicket().getBytes(), "ticket");
      moreColumns.putArray("columns").add("id").add("amount");
      assertUnauthenticated(raw, new Ticket(Json.bytes(moreColumns)), "does not match");
      ObjectNode outOfRange = Json.parseObject(endpoint.getTicket().getBytes(), "ticket");
      outOfRange.put("batch_rows", 1L << 32);
      assertUnauthenticated(raw, new Ticket(Json.bytes(outOfRange)), "not one of Floe's");
      ObjectNode unsigned = Json.parseObject(endpoint.getTicket().getBytes(), "ticket");
      unsigned.remove("sig");
      assertUnauthenticated(raw, new Ticket(Json.bytes(unsigned)), "not signed");

      assertThat(rows(raw, endpoint.getTicket())).isEqualTo(genuine);
    }
  }

  private static void action(FlightClient raw, String type, String body) {
    raw.doAction(new Action(type, body.getBytes(StandardCharsets.UTF_8)))
        .forEachRemaining(result -> {});
  }

  private static void assertUnauthenticated(FlightClient raw, Ticket ticket, String why) {
    assertThatThrownBy(() -> rows(raw, ticket))
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED);
              assertThat(e.status().description()).contains(why);
            });
  }

  private static long rows(FlightClient raw, Ticket ticket) throws Exception {
    long rows = 0;
    try (FlightStream stream = raw.getStream(ticket)) {
      while (stream.next()) {
        rows += stream.getRoot().getRowCount();
      }
    }
    return rows;
  }
}
