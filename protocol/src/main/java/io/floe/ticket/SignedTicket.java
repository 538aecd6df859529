package io.floe.ticket;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** What a signed ticket can name: rows of a slice, or a job's rows on one node for some batches. */
public sealed interface SignedTicket permits FloeTicket, JobTicket {
  /** The dataset the ticket reads. */
  String dataset();

  /** The contents as the text the signature covers: every field, in a fixed order. */
  String canonical();

  /** Writes the contents into a ticket's JSON object (without expiry and signature). */
  void writeTo(ObjectNode node);
}
