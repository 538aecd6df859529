package io.floe.gateway.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.arrow.ArrowSchemas;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.job.TailPolicy;
import io.floe.protocol.JobReadRequest;
import io.floe.spec.DatasetLayout;
import io.floe.testing.TestRows;
import io.floe.ticket.JobTicket;
import io.floe.ticket.TicketSigner;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.junit.jupiter.api.Test;

/**
 * A job read's plan has one endpoint per node holding any of its rows, whatever the number of
 * slices: its size and the work of making it do not grow with them.
 */
class JobReadPlannerTest {
  private static final long ROWS = 4_000_000;
  private static final String[] HOLDERS = {
    "grpc+tcp://10.0.0.1:47470", "grpc+tcp://10.0.0.2:47470", "grpc+tcp://10.0.0.3:47470"
  };
  private static final TicketSigner TICKETS =
      new TicketSigner(
          "a-ticket-secret-for-the-planner-test".getBytes(StandardCharsets.UTF_8),
          Duration.ofMinutes(10));

  private static DatasetLayout layout(int slices) {
    List<DatasetLayout.SliceRows> rows = new ArrayList<>(slices);
    for (int s = 0; s < slices; s++) {
      long first = ROWS * s / slices;
      long last = ROWS * (s + 1) / slices;
      rows.add(
          new DatasetLayout.SliceRows(
              "events/1/s" + s, last - first, (last - first) * 80, HOLDERS[s % HOLDERS.length]));
    }
    return new DatasetLayout(
        "events", 1, null, ArrowSchemas.fromIceberg(TestRows.EVENTS).toJson(), rows);
  }

  /** Slice {@code s} held on node {@code s % 3} with a copy on node {@code (s + 1) % 3}. */
  private static DatasetLayout replicated(int slices) {
    List<DatasetLayout.SliceRows> rows = new ArrayList<>(slices);
    for (DatasetLayout.SliceRows slice : layout(slices).slices()) {
      int node = rows.size() % HOLDERS.length;
      rows.add(
          new DatasetLayout.SliceRows(
              slice.sliceId(),
              slice.rows(),
              slice.bytes(),
              HOLDERS[node],
              List.of(HOLDERS[(node + 1) % HOLDERS.length])));
    }
    return new DatasetLayout("events", 1, null, layout(slices).arrowSchemaJson(), rows);
  }

  private static FlightInfo plan(DatasetLayout layout) {
    return plan(layout, List.of());
  }

  private static FlightInfo plan(DatasetLayout layout, List<String> avoid) {
    JobSpec spec =
        new JobSpec(
            "train",
            "events",
            7,
            true,
            JobMode.DETERMINISTIC,
            List.of(),
            4096,
            TailPolicy.DROP,
            4096,
            16,
            1,
            30_000,
            false);
    JobStatus job =
        new JobStatus(
            spec,
            0,
            new PinnedLayout(1, layout.fingerprint(), ROWS),
            List.of(),
            ROWS / 4096,
            0,
            0,
            0,
            0,
            List.of(),
            null);
    JobReadRequest request = new JobReadRequest("train", 0, 2, 1, 0, 32L, 1, 1, avoid);
    return new JobReadPlanner(TICKETS, new JobOrders())
        .plan(job, layout, request, FlightDescriptor.command(request.toJson()), null);
  }

  @Test
  void aPlanHasOneEndpointPerNodeWhateverTheSlices() {
    FlightInfo few = plan(layout(8));
    FlightInfo many = plan(layout(20_000));

    assertThat(many.getEndpoints()).hasSize(HOLDERS.length);
    assertThat(few.getEndpoints()).hasSize(HOLDERS.length);
    assertThat((double) many.serialize().capacity())
        .as("answer bytes at 20,000 slices against 8")
        .isLessThanOrEqualTo(1.5 * few.serialize().capacity());
    List<String> holders = new ArrayList<>();
    for (FlightEndpoint endpoint : many.getEndpoints()) {
      JobTicket ticket = (JobTicket) TICKETS.verify(endpoint.getTicket());
      holders.add(ticket.holder());
      assertThat(endpoint.getLocations().get(0).getUri().toString()).isEqualTo(ticket.holder());
      assertThat(ticket.placement()).isEqualTo(Placement.of(layout(20_000)).fingerprint());
    }
    assertThat(holders).containsExactlyInAnyOrder(HOLDERS);
    assertThat(many.getRecords()).isEqualTo(32L * 2048);
  }

  @Test
  void thePlacementFingerprintChangesWhenASliceMoves() {
    DatasetLayout before = layout(100);
    List<DatasetLayout.SliceRows> moved = new ArrayList<>(before.slices());
    DatasetLayout.SliceRows slice = moved.get(42);
    moved.set(
        42, new DatasetLayout.SliceRows(slice.sliceId(), slice.rows(), slice.bytes(), HOLDERS[1]));
    DatasetLayout after = new DatasetLayout("events", 1, null, before.arrowSchemaJson(), moved);

    assertThat(after.fingerprint()).isEqualTo(before.fingerprint());
    assertThat(Placement.of(after).fingerprint()).isNotEqualTo(Placement.of(before).fingerprint());
  }

  @Test
  void aReaderAvoidingANodeIsSentToTheCopiesOfItsSlices() {
    DatasetLayout layout = replicated(300);
    FlightInfo whole = plan(layout);
    FlightInfo avoiding = plan(layout, List.of(HOLDERS[0]));

    assertThat(whole.getEndpoints()).hasSize(3);
    List<String> holders = new ArrayList<>();
    for (FlightEndpoint endpoint : avoiding.getEndpoints()) {
      JobTicket ticket = (JobTicket) TICKETS.verify(endpoint.getTicket());
      holders.add(ticket.holder());
      assertThat(ticket.avoid()).containsExactly(HOLDERS[0]);
      // The serving node places the slices as the plan did, from the ticket alone.
      assertThat(Placement.of(layout, ticket.avoid()).fingerprint())
          .isEqualTo(ticket.placement())
          .isNotEqualTo(Placement.of(layout).fingerprint());
    }
    assertThat(holders).containsExactlyInAnyOrder(HOLDERS[1], HOLDERS[2]);
    Placement placement = Placement.of(layout, List.of(HOLDERS[0]));
    for (int s = 0; s < layout.slices().size(); s++) {
      String placed = placement.holders().get(placement.holderOf(s));
      assertThat(placed).isIn(layout.slices().get(s).holders()).isNotEqualTo(HOLDERS[0]);
    }
  }

  @Test
  void aSliceWithoutACopyElsewhereStaysOnItsHolder() {
    DatasetLayout single = layout(30);
    Placement placement = Placement.of(single, List.of(HOLDERS[0]));

    assertThat(placement.fingerprint()).isEqualTo(Placement.of(single).fingerprint());
    assertThat(placement.holders()).containsExactlyInAnyOrder(HOLDERS);
  }
}
