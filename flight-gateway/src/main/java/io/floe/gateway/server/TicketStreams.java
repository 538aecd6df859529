package io.floe.gateway.server;

import io.floe.auth.Caller;
import io.floe.gateway.BatchSource;
import org.apache.arrow.flight.Ticket;

/** Opens the answer to a DoGet ticket, or throws the Flight status that says why not. */
public interface TicketStreams {
  /** {@code caller} presents the ticket: a ticket bound to another caller is refused. */
  BatchSource open(Caller caller, Ticket ticket);
}
