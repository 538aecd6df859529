package io.floe.ticket;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.Json;
import io.floe.tenant.Owner;
import io.floe.util.Excerpt;
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
 *
 * <p>The signature covers the bytes the ticket's {@link TicketCodec} writes (its {@code kind} and
 * fields), followed by the caller it is bound to, if any, and its expiry: the ticket as sent, up to
 * its {@code "sig"}. {@link #verify} reads the ticket, encodes what it read again and checks the
 * signature over those bytes rather than over the bytes it received: what is checked is then a
 * function of the values the node goes on to serve, so field order, whitespace, escapes or a
 * repeated key cannot make the checked text differ from what is served, and the codec refuses
 * fields it does not know. Each field is named once, in its type's codec, so no second list of the
 * signed fields can leave one out.
 *
 * <p>A ticket may be <em>bound</em> to the caller that planned it (its tenant and name, as the node
 * authenticated it): the caller is written into the ticket as {@code "caller": {"tenant": ...,
 * "name": ...}} and signed with it, and only that caller may present it ({@link #verify(Ticket,
 * Owner)}); anyone else gets {@link ErrorCode#TICKET_WRONG_CALLER}. Binding is to a name, not a
 * connection, so every process of one caller (a DataLoader's workers sharing a token, any node of
 * the cluster) may present it. An unbound ticket (one planned for the anonymous caller of a node
 * without tokens) has no such field and may be presented by anyone.
 */
public final class TicketSigner {
  private static final String ALGORITHM = "HmacSHA256";
  private static final int MIN_SECRET_BYTES = 16;

  // The fields the signer adds after the ticket's own, and those of a caller.
  private static final String CALLER = "caller";
  private static final String EXPIRES = "expires";
  private static final String SIG = "sig";
  private static final String TENANT = "tenant";
  private static final String NAME = "name";

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

  /**
   * The Flight ticket for what {@code ticket} names, valid for the signer's lifetime from now and
   * usable by whoever presents it with a valid token (auth off: the anonymous caller).
   */
  public Ticket sign(SignedTicket ticket) {
    return sign(ticket, null);
  }

  /**
   * As {@link #sign(SignedTicket)}, bound to {@code caller} (null: unbound): only a caller of that
   * tenant and name may present it.
   */
  public Ticket sign(SignedTicket ticket, Owner caller) {
    Preconditions.checkArgument(
        caller == null || caller.caller() != null, "Invalid ticket caller: %s has no name", caller);
    long expires = clock.millis() + ttl.toMillis();
    ObjectNode node = signed(ticket, caller, expires);
    node.put(SIG, signature(Json.bytes(node)));
    return new Ticket(Json.bytes(node));
  }

  /**
   * The ticket's contents if its signature is this cluster's and it has not expired.
   *
   * @throws RuntimeException {@link ErrorCode#TICKET_INVALID} (UNAUTHENTICATED), naming what was
   *     wrong
   */
  public SignedTicket verify(Ticket ticket) {
    return verify(ticket, null);
  }

  /**
   * The ticket's contents if its signature is this cluster's, it has not expired and, if it is
   * bound to a caller, {@code presenter} is that caller (null: a caller tickets are not bound to,
   * the anonymous caller of a node without tokens; it may present unbound tickets only).
   *
   * @throws RuntimeException {@link ErrorCode#TICKET_INVALID} (UNAUTHENTICATED), naming what was
   *     wrong, or {@link ErrorCode#TICKET_WRONG_CALLER} (PERMISSION_DENIED) naming both callers
   */
  public SignedTicket verify(Ticket ticket, Owner presenter) {
    SignedTicket parsed;
    Owner bound;
    long expires;
    String signature;
    try {
      ObjectNode node = Json.parseObject(ticket.getBytes(), "ticket");
      JsonNode sig = node.remove(SIG);
      JsonNode expiry = node.remove(EXPIRES);
      JsonNode caller = node.remove(CALLER);
      parsed = TicketCodec.decodeAny(node);
      bound = caller == null ? null : parseCaller(caller);
      if (sig == null || !sig.isTextual()) {
        throw unauthenticated("ticket is not signed");
      }
      if (expiry == null || !expiry.isIntegralNumber() || !expiry.canConvertToLong()) {
        throw unauthenticated("ticket has no expiry");
      }
      expires = expiry.asLong();
      signature = sig.asText();
    } catch (IllegalArgumentException e) {
      throw unauthenticated("ticket is not one of Floe's: " + e.getMessage());
    }
    byte[] expected =
        signature(Json.bytes(signed(parsed, bound, expires))).getBytes(StandardCharsets.US_ASCII);
    if (!MessageDigest.isEqual(expected, signature.getBytes(StandardCharsets.US_ASCII))) {
      throw unauthenticated("ticket signature does not match its contents");
    }
    if (clock.millis() > expires) {
      throw unauthenticated("ticket expired at " + java.time.Instant.ofEpochMilli(expires));
    }
    if (bound != null && !bound.equals(presenter)) {
      throw ErrorCode.TICKET_WRONG_CALLER.exception(
          String.format(
              "This ticket for dataset '%s' was planned by '%s' of tenant '%s'; %s may not"
                  + " present it: plan the read with your own token",
              parsed.dataset(),
              Excerpt.of(bound.caller()),
              bound.tenant(),
              presenter == null
                  ? "a caller without a token"
                  : String.format(
                      "'%s' of tenant '%s'", Excerpt.of(presenter.caller()), presenter.tenant())),
          null);
    }
    return parsed;
  }

  private static ObjectNode callerJson(Owner caller) {
    ObjectNode node = Json.object();
    node.put(TENANT, caller.tenant());
    node.put(NAME, caller.caller());
    return node;
  }

  /**
   * @throws IllegalArgumentException unless {@code node} is a caller as {@link #callerJson} writes
   */
  private static Owner parseCaller(JsonNode node) {
    if (node == null
        || !node.isObject()
        || node.size() != 2
        || !node.path(TENANT).isTextual()
        || !node.path(NAME).isTextual()
        || node.get(NAME).asText().isEmpty()) {
      throw new IllegalArgumentException(
          String.format("'%s' must be {\"%s\": ..., \"%s\": ...}", CALLER, TENANT, NAME));
    }
    return new Owner(node.get(TENANT).asText(), node.get(NAME).asText());
  }

  /**
   * The object the signature covers and the ticket is sent as (with {@code sig} after it): the
   * ticket as its codec writes it, then, for a bound ticket only, its caller, then its expiry.
   */
  private static ObjectNode signed(SignedTicket ticket, Owner caller, long expires) {
    ObjectNode node = TicketCodec.encodeAny(ticket);
    if (caller != null) {
      node.set(CALLER, callerJson(caller));
    }
    node.put(EXPIRES, expires);
    return node;
  }

  private String signature(byte[] signed) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return HexFormat.of().formatHex(mac.doFinal(signed));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 unavailable", e);
    }
  }

  private static RuntimeException unauthenticated(String why) {
    return ErrorCode.TICKET_INVALID.exception("Invalid ticket: " + why, null);
  }
}
