package io.floe.ticket;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.protocol.Json;
import io.floe.spec.DatasetSpec;
import io.floe.util.Excerpt;
import io.floe.util.Preconditions;
import java.util.Set;
import org.apache.arrow.flight.Ticket;

/**
 * What one {@code DoGet} serves: rows {@code [from, to)} of one slice of one dataset. On the wire
 * it is a small JSON object, signed by {@link TicketSigner}; clients may read it (to resume a slice
 * range after a failure) but cannot change it.
 */
public record FloeTicket(String dataset, String sliceId, long from, long to)
    implements SignedTicket {
  private static final String WHAT = "ticket";

  public FloeTicket {
    DatasetSpec.checkName(dataset);
    Preconditions.checkArgument(
        0 <= from && from <= to, "Invalid ticket row range [%s, %s)", from, to);
    Preconditions.checkArgument(
        sliceId != null && sliceId.startsWith(dataset + "/"),
        "Invalid ticket: slice '%s' is not part of dataset '%s'",
        Excerpt.of(sliceId),
        dataset);
  }

  public long rows() {
    return to - from;
  }

  @Override
  public String canonical() {
    return String.join(
        "\n", "floe-ticket-v1", dataset, sliceId, Long.toString(from), Long.toString(to));
  }

  @Override
  public void writeTo(ObjectNode node) {
    node.put("dataset", dataset);
    node.put("slice", sliceId);
    node.put("from", from);
    node.put("to", to);
  }

  /**
   * @throws IllegalArgumentException naming what is wrong with the ticket
   */
  public static FloeTicket parse(Ticket ticket) {
    return parse(Json.parseObject(ticket.getBytes(), WHAT));
  }

  static FloeTicket parse(ObjectNode node) {
    for (String field : Set.of("dataset", "slice", "from", "to")) {
      if (!node.hasNonNull(field)) {
        throw new IllegalArgumentException("Invalid ticket: missing '" + field + "'");
      }
    }
    if (!node.get("from").canConvertToLong() || !node.get("to").canConvertToLong()) {
      throw new IllegalArgumentException("Invalid ticket: 'from' and 'to' must be integers");
    }
    return new FloeTicket(
        node.get("dataset").asText(),
        node.get("slice").asText(),
        node.get("from").asLong(),
        node.get("to").asLong());
  }
}
