package io.floe.gateway;

import io.floe.ticket.TicketSigner;
import java.time.Duration;
import org.apache.arrow.flight.Location;
import org.apache.iceberg.relocated.com.google.common.base.Preconditions;

/**
 * How the gateway talks to the cluster and to readers.
 *
 * @param advertised the location readers are told to fetch this node's slices from
 * @param askTimeout how long a query to a dataset or job entity may take
 * @param askAttemptTimeout how long one ask of a query that may be asked again waits before it is
 *     sent again (an entity whose node died answers only once it runs elsewhere)
 * @param loadWaitTimeout how long a {@code load} with {@code wait} may wait for READY
 * @param tickets signs the tickets this node plans and checks those it serves
 */
public record GatewaySettings(
    Location advertised,
    Duration askTimeout,
    Duration askAttemptTimeout,
    Duration loadWaitTimeout,
    TicketSigner tickets) {
  public static final Duration ASK_TIMEOUT_DEFAULT = Duration.ofSeconds(30);
  public static final Duration ASK_ATTEMPT_TIMEOUT_DEFAULT = Duration.ofSeconds(1);
  public static final Duration LOAD_WAIT_TIMEOUT_DEFAULT = Duration.ofMinutes(30);

  public GatewaySettings {
    Preconditions.checkArgument(advertised != null, "Invalid advertised location: null");
    Preconditions.checkArgument(
        !askTimeout.isNegative() && !askTimeout.isZero(), "Invalid ask timeout: %s", askTimeout);
    Preconditions.checkArgument(
        !askAttemptTimeout.isNegative() && !askAttemptTimeout.isZero(),
        "Invalid ask attempt timeout: %s",
        askAttemptTimeout);
  }

  public static GatewaySettings of(Location advertised) {
    return new GatewaySettings(
        advertised,
        ASK_TIMEOUT_DEFAULT,
        ASK_ATTEMPT_TIMEOUT_DEFAULT,
        LOAD_WAIT_TIMEOUT_DEFAULT,
        TicketSigner.random(TicketSigner.TTL_DEFAULT));
  }
}
