package io.floe.ticket;

/**
 * What a signed ticket can name: rows of a slice, or a job's rows on one node for some batches.
 * Each type's wire form is its one {@link TicketCodec}, whose bytes {@link TicketSigner} signs.
 */
public sealed interface SignedTicket permits FloeTicket, JobTicket {
  /** The dataset the ticket reads. */
  String dataset();
}
