package io.floe.ticket;

import io.floe.protocol.Json;
import io.floe.spec.DatasetSpec;
import io.floe.util.Excerpt;
import io.floe.util.Preconditions;
import java.util.List;
import org.apache.arrow.flight.Ticket;

/**
 * What one {@code DoGet} serves: rows {@code [from, to)} of one slice of one dataset. On the wire
 * it is a small JSON object ({@link #CODEC}), signed by {@link TicketSigner}; clients may read it
 * (to resume a slice range after a failure) but cannot change it.
 */
public record FloeTicket(String dataset, String sliceId, long from, long to)
    implements SignedTicket {
  private static final TicketField<FloeTicket, String> DATASET =
      TicketField.text("dataset", FloeTicket::dataset);
  private static final TicketField<FloeTicket, String> SLICE =
      TicketField.text("slice", FloeTicket::sliceId);
  private static final TicketField<FloeTicket, Long> FROM =
      TicketField.int64("from", FloeTicket::from);
  private static final TicketField<FloeTicket, Long> TO = TicketField.int64("to", FloeTicket::to);

  /** The wire form: {@code {"kind": "slice", "dataset", "slice", "from", "to"}}. */
  static final TicketCodec<FloeTicket> CODEC =
      new TicketCodec<>(
          "slice",
          List.of(DATASET, SLICE, FROM, TO),
          node ->
              new FloeTicket(DATASET.read(node), SLICE.read(node), FROM.read(node), TO.read(node)));

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

  /**
   * What a slice ticket names, as a client reads it (to resume a slice range): not verified, which
   * only the nodes can do.
   *
   * @throws IllegalArgumentException naming what is wrong with the ticket
   */
  public static FloeTicket parse(Ticket ticket) {
    try {
      return CODEC.read(Json.parseObject(ticket.getBytes(), "ticket"));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Invalid slice ticket: " + e.getMessage(), e);
    }
  }
}
