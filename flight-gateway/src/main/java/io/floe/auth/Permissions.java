package io.floe.auth;

import io.floe.protocol.ErrorCode;
import org.apache.arrow.flight.FlightProducer.CallContext;

/**
 * Which role each request needs: managing datasets (load, refresh, drop) is an operator's;
 * planning, reading, training jobs and the status views are any authenticated caller's. A caller
 * scoped to some datasets reaches only those ({@link #checkReaches}). Who owns a dataset or job is
 * the entities' to check, with the caller's {@link Caller#requester()}.
 */
public final class Permissions {
  private Permissions() {}

  /**
   * The call's caller, if its role may do {@code what}.
   *
   * @throws RuntimeException UNAUTHENTICATED for a call the authenticator did not pass (none), or
   *     PERMISSION_DENIED naming the role needed
   */
  public static Caller check(CallContext context, Role needed, String what) {
    return check(context.peerIdentity(), needed, what);
  }

  /** As {@link #check(CallContext, Role, String)}, for a call's peer identity. */
  public static Caller check(String peerIdentity, Role needed, String what) {
    Caller caller = authenticated(peerIdentity);
    if (!caller.role().allows(needed)) {
      throw ErrorCode.PERMISSION_DENIED.exception(
          String.format(
              "%s needs the %s role; '%s' is a %s",
              what, needed.wireName(), caller.name(), caller.role().wireName()),
          null);
    }
    return caller;
  }

  /**
   * The caller a call's peer identity names, whatever its role.
   *
   * @throws RuntimeException UNAUTHENTICATED, saying why, for a call the authenticator did not pass
   *     (or that no authenticator saw)
   */
  public static Caller authenticated(String peerIdentity) {
    java.util.Optional<String> refusal = Caller.refusal(peerIdentity);
    if (refusal.isPresent()) {
      throw ErrorCode.UNAUTHENTICATED.exception(refusal.get(), null);
    }
    Caller caller = Caller.fromPeerIdentity(peerIdentity);
    if (caller == null) {
      throw ErrorCode.UNAUTHENTICATED.exception("The call carries no authenticated caller", null);
    }
    return caller;
  }

  /**
   * {@code dataset}, if the caller's scope reaches it.
   *
   * @throws RuntimeException PERMISSION_DENIED naming the dataset, the caller and its scope
   */
  public static String checkReaches(Caller caller, String dataset) {
    if (!caller.scope().allows(dataset)) {
      throw ErrorCode.PERMISSION_DENIED.exception(
          String.format(
              "Dataset '%s' is outside the scope of '%s' (tenant '%s'), which reaches only"
                  + " datasets %s",
              io.floe.util.Excerpt.of(dataset),
              caller.name(),
              caller.tenant(),
              io.floe.util.Excerpt.of(caller.scope().toString())),
          null);
    }
    return dataset;
  }
}
