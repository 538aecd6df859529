package io.floe.gateway;

import io.floe.ticket.TicketSigner;
import io.floe.util.Preconditions;
import java.time.Duration;
import org.apache.arrow.flight.Location;

/**
 * How the gateway talks to the cluster and to readers; read once from {@code floe.gateway} (the
 * defaults are in application.conf).
 *
 * @param advertised the location readers are told to fetch this node's slices from
 * @param askTimeout how long a query to a dataset or job entity may take
 * @param askAttemptTimeout how long one ask of a query that may be asked again waits before it is
 *     sent again (an entity whose node died answers only once it runs elsewhere)
 * @param loadWaitTimeout how long a {@code load} with {@code wait} may wait for READY
 * @param gatherAhead how many of a job stream's batches are gathered ahead of the one being
 *     written, on a pool of one thread per core (0: each is gathered when the transport asks)
 * @param tickets signs the tickets this node plans and checks those it serves
 */
public record GatewaySettings(
    Location advertised,
    Duration askTimeout,
    Duration askAttemptTimeout,
    Duration loadWaitTimeout,
    int gatherAhead,
    TicketSigner tickets) {
  public GatewaySettings {
    Preconditions.checkArgument(advertised != null, "Invalid advertised location: null");
    Preconditions.checkArgument(
        !askTimeout.isNegative() && !askTimeout.isZero(), "Invalid ask timeout: %s", askTimeout);
    Preconditions.checkArgument(
        !askAttemptTimeout.isNegative() && !askAttemptTimeout.isZero(),
        "Invalid ask attempt timeout: %s",
        askAttemptTimeout);
    Preconditions.checkArgument(
        gatherAhead >= 0, "Invalid floe.gateway.gather-ahead: %s (0 or more)", gatherAhead);
  }
}
