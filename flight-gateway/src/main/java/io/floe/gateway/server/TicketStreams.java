package io.floe.gateway.server;

import io.floe.gateway.BatchSource;
import org.apache.arrow.flight.Ticket;

/** Opens the answer to a DoGet ticket, or throws the Flight status that says why not. */
public interface TicketStreams {
  BatchSource open(Ticket ticket);
}
