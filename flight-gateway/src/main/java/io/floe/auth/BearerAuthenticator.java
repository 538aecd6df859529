package io.floe.auth;

import java.util.Optional;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.AuthUtilities;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;

/**
 * Authenticates every Flight call by its {@code Authorization: Bearer <token>} header against the
 * node's {@link TokenFile}, and a token the file does not have, when Kubernetes callers are
 * enabled, by the API server's review ({@link TokenReviewer}): the ServiceAccount it names is the
 * caller its token file line makes it. A call without the header is the anonymous caller when
 * settings allow one (local use), else refused. The caller becomes the call's peer identity ({@link
 * Caller}).
 *
 * <p>A refused call is not failed here: Flight's middleware would send the refusal without its
 * error code. Its identity says why instead, and {@link Permissions#check}, which every request
 * handler calls first, answers UNAUTHENTICATED with the code.
 */
public final class BearerAuthenticator implements CallHeaderAuthenticator {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(BearerAuthenticator.class);

  /** A failing API server is reported at WARN at most this often (every call meets it). */
  private static final long WARN_EVERY_NANOS = java.time.Duration.ofSeconds(30).toNanos();

  private final AuthSettings settings;
  private final java.util.concurrent.atomic.AtomicLong warnedAt =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

  public BearerAuthenticator(AuthSettings settings) {
    this.settings = settings;
  }

  @Override
  public AuthResult authenticate(CallHeaders headers) {
    String identity;
    try {
      identity = callerOf(headers).peerIdentity();
    } catch (Refused refused) {
      identity = Caller.refusedIdentity(refused.getMessage());
    }
    String peer = identity;
    return () -> peer;
  }

  private static final class Refused extends RuntimeException {
    Refused(String why) {
      super(why, null, false, false);
    }
  }

  private Caller callerOf(CallHeaders headers) {
    String header = headers.get(Auth2Constants.AUTHORIZATION_HEADER);
    if (header == null) {
      return settings
          .anonymous()
          .map(role -> Caller.unscoped(Caller.ANONYMOUS, role))
          .orElseThrow(
              () ->
                  refused(
                      "This node needs a bearer token: send 'Authorization: Bearer <token>'"
                          + " (the clients' token or token file: FLOE_TOKEN or FLOE_TOKEN_FILE)"));
    }
    String token = AuthUtilities.getValueFromAuthHeader(headers, Auth2Constants.BEARER_PREFIX);
    if (token == null || token.isBlank()) {
      throw refused("The Authorization header is not a bearer token ('Bearer <token>')");
    }
    String presented = token.strip();
    Optional<Caller> caller = settings.tokens().flatMap(file -> file.caller(presented));
    if (caller.isPresent()) {
      return caller.get();
    }
    if (settings.reviewer().isEmpty()) {
      throw refused("Unknown bearer token");
    }
    return reviewed(settings.reviewer().get(), presented);
  }

  /** The caller a ServiceAccount token stands for, as the API server reviews it. */
  private Caller reviewed(TokenReviewer reviewer, String token) {
    Optional<String> user;
    try {
      user = reviewer.review(token);
    } catch (RuntimeException e) {
      long now = System.nanoTime();
      long last = warnedAt.get();
      if (now - last >= WARN_EVERY_NANOS && warnedAt.compareAndSet(last, now)) {
        LOG.warn("Kubernetes TokenReview failed (again at DEBUG for 30 s): {}", e.toString());
      } else {
        LOG.debug("Kubernetes TokenReview failed: {}", e.toString());
      }
      throw refused("The bearer token could not be reviewed by the Kubernetes API server");
    }
    if (user.isEmpty()) {
      throw refused(
          "Unknown bearer token (neither in the token file nor a ServiceAccount token of this"
              + " node's audience that the Kubernetes API server accepts)");
    }
    String name = user.get();
    return settings
        .tokens()
        .flatMap(file -> file.serviceAccount(name))
        .orElseThrow(
            () ->
                refused(
                    "Kubernetes user '"
                        + io.floe.util.Excerpt.of(name)
                        + "' has no role on this node (no token file line names it)"));
  }

  private static Refused refused(String why) {
    return new Refused(why);
  }
}
