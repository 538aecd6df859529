package io.floe.ticket;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.Json;
import io.floe.util.Preconditions;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.arrow.flight.Ticket;

/**
 * Signs tickets with HMAC-SHA256 under the cluster's secret and checks them on {@code DoGet}. A
 * ticket names exactly what it serves (dataset, slice, rows, expiry); changing any of it, or making
 * one up without the secret, or using one past its expiry gets UNAUTHENTICATED and nothing else.
 * Every node of a cluster must share the secret, since any node plans tickets for slices that other
 * nodes serve.
 */
public final class TicketSigner {
  private static final String ALGORITHM = "HmacSHA256";
  private static final int MIN_SECRET_BYTES = 16;

  private final SecretKeySpec key;
  private final Duration ttl;
  private final Clock clock;

  public TicketSigner(byte[] secret, Duration ttl, Clock clock) {
    Preconditions.checkArgument(
        secret != null && secret.length >= MIN_SECRET_BYTES,
        "Invalid ticket secret: %s bytes (needs at least %s)",
        secret == null ? 0 : secret.length,
        MIN_SECRET_BYTES);
    Preconditions.checkArgument(
        !ttl.isNegative() && !ttl.isZero(), "Invalid ticket lifetime: %s", ttl);
    this.key = new SecretKeySpec(secret.clone(), ALGORITHM);
    this.ttl = ttl;
    this.clock = clock;
  }

  public TicketSigner(byte[] secret, Duration ttl) {
    this(secret, ttl, Clock.systemUTC());
  }

  /** A signer with a random secret: for a node that forms a cluster of its own. */
  public static TicketSigner random(Duration ttl) {
    byte[] secret = new byte[32];
    new SecureRandom().nextBytes(secret);
    return new TicketSigner(secret, ttl);
  }

  /** The Flight ticket for rows of a slice, valid for the signer's lifetime from now. */
  public Ticket sign(SignedTicket ticket) {
    long expires = clock.millis() + ttl.toMillis();
    ObjectNode node = Json.object();
    ticket.writeTo(node);
    node.put("expires", expires);
    node.put("sig", signature(ticket, expires));
    return new Ticket(Json.bytes(node));
  }

  /**
   * The ticket's contents if its signature is this cluster's and it has not expired.
   *
   * @throws RuntimeException {@link ErrorCode#TICKET_INVALID} (UNAUTHENTICATED), naming what was
   *     wrong
   */
  public SignedTicket verify(Ticket ticket) {
    SignedTicket parsed;
    long expires;
    String signature;
    try {
      ObjectNode node = Json.parseObject(ticket.getBytes(), "ticket");
      parsed = JobTicket.isJobTicket(node) ? JobTicket.parse(node) : FloeTicket.parse(node);
      if (!node.hasNonNull("sig") || !node.get("sig").isTextual()) {
        throw unauthenticated("ticket is not signed");
      }
      if (!node.hasNonNull("expires") || !node.get("expires").canConvertToLong()) {
        throw unauthenticated("ticket has no expiry");
      }
      expires = node.get("expires").asLong();
      signature = node.get("sig").asText();
    } catch (IllegalArgumentException | ArithmeticException e) {
      // ArithmeticException: a number altered out of its range.
      throw unauthenticated("ticket is not one of Floe's: " + e.getMessage());
    }
    byte[] expected = signature(parsed, expires).getBytes(StandardCharsets.US_ASCII);
    if (!MessageDigest.isEqual(expected, signature.getBytes(StandardCharsets.US_ASCII))) {
      throw unauthenticated("ticket signature does not match its contents");
    }
    if (clock.millis() > expires) {
      throw unauthenticated("ticket expired at " + java.time.Instant.ofEpochMilli(expires));
    }
    return parsed;
  }

  private String signature(SignedTicket ticket, long expires) {
    String canonical = ticket.canonical() + "\n" + expires;
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return HexFormat.of().formatHex(mac.doFinal(canonical.getBytes(StandardCharsets.UTF_8)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 unavailable", e);
    }
  }

  private static RuntimeException unauthenticated(String why) {
    return ErrorCode.TICKET_INVALID.exception("Invalid ticket: " + why, null);
  }
}
