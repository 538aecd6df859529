package io.floe.gateway.dataset;

import io.floe.gateway.SliceHolders;
import io.floe.protocol.ReadRequest;
import io.floe.spec.DatasetLayout;
import io.floe.tenant.Owner;
import io.floe.ticket.FloeTicket;
import io.floe.ticket.TicketSigner;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.Location;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Plans a read: maps a shard to its global row range, the range to slice parts, and each part to an
 * endpoint whose ticket names exactly those rows, located at the node that holds the slice and then
 * at the nodes holding its other copies (a dataset of several replicas), which a reader tries in
 * turn when one fails.
 */
final class ReadPlanner {
  private final TicketSigner tickets;

  ReadPlanner(TicketSigner tickets) {
    this.tickets = tickets;
  }

  /**
   * @param bearer the caller the tickets are bound to (null: unbound, the anonymous caller)
   */
  FlightInfo plan(
      DatasetLayout layout, ReadRequest request, FlightDescriptor descriptor, Owner bearer) {
    Schema schema;
    try {
      schema = Schema.fromJSON(layout.arrowSchemaJson());
    } catch (java.io.IOException e) {
      throw new IllegalStateException("Unreadable schema of dataset " + layout.name(), e);
    }
    long[] range = layout.shardRange(request.shardIndex(), request.shardCount());
    List<FlightEndpoint> endpoints = new ArrayList<>();
    double bytes = 0;
    for (DatasetLayout.SlicePart part : layout.parts(range[0], range[1])) {
      FloeTicket ticket = new FloeTicket(layout.name(), part.sliceId(), part.from(), part.to());
      DatasetLayout.SliceRows slice = slice(layout, part.sliceId());
      Location[] holders =
          slice.holders().stream()
              .map(holder -> SliceHolders.location(part.sliceId(), holder))
              .toArray(Location[]::new);
      endpoints.add(new FlightEndpoint(tickets.sign(ticket, bearer), holders));
      bytes += slice.rows() == 0 ? 0 : (double) slice.bytes() * part.rows() / slice.rows();
    }
    return FlightInfo.builder(schema, descriptor, endpoints)
        .setRecords(range[1] - range[0])
        .setBytes(Math.round(bytes))
        .setOrdered(true)
        .build();
  }

  private static DatasetLayout.SliceRows slice(DatasetLayout layout, String sliceId) {
    int index = layout.indexOf(sliceId);
    if (index < 0) {
      throw new IllegalStateException("Slice " + sliceId + " missing from layout");
    }
    return layout.slices().get(index);
  }
}
