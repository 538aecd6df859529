package io.floe.auth;

import io.floe.tenant.Owner;
import io.floe.tenant.Requester;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;

/**
 * Who made a call, as the authenticator established it: a name (from the token file, a reviewed
 * ServiceAccount's {@code system:serviceaccount:ns:name}, or {@code anonymous}), a role, the tenant
 * it belongs to and the datasets it may reach. Travels through Flight as the call's peer identity
 * ({@link #peerIdentity}), which stays inside the node.
 */
public record Caller(String name, Role role, String tenant, DatasetScope scope) {
  public static final String ANONYMOUS = "anonymous";

  public Caller {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(role, "role");
    Owner.checkTenant(tenant);
    Objects.requireNonNull(scope, "scope");
  }

  /** A caller of the default tenant who may reach every dataset (anonymous callers, old lines). */
  public static Caller unscoped(String name, Role role) {
    return new Caller(name, role, Owner.DEFAULT_TENANT, DatasetScope.all());
  }

  /** What the datasets this caller loads and the jobs it registers are owned by. */
  public Owner owner() {
    return new Owner(tenant, name);
  }

  /** Whether this is the anonymous caller of a node that lets callers in without a token. */
  public boolean anonymous() {
    return name.equals(ANONYMOUS) && tenant.equals(Owner.DEFAULT_TENANT);
  }

  /**
   * Who the tickets this caller plans are bound to (only it may present them): itself, by tenant
   * and name, so every process holding its token may; none for the anonymous caller, whose tickets
   * stay unbound as they were before callers were bound.
   */
  public Optional<Owner> ticketHolder() {
    return anonymous() ? Optional.empty() : Optional.of(owner());
  }

  /** This caller asking to change a dataset or job: an admin may change what any tenant owns. */
  public Requester requester() {
    return role == Role.ADMIN ? Requester.administrator(owner()) : Requester.member(owner());
  }

  /** First field of a peer identity this class wrote; anything else is not one. */
  private static final String MARK = "floe1";

  /** The caller as one string: its fields URL-encoded (no spaces), separated by spaces. */
  public String peerIdentity() {
    return String.join(
        " ", MARK, role.wireName(), encode(tenant), encode(name), encode(scope.toString()));
  }

  /** The mark of a refused call's identity, followed by why it was refused. */
  private static final String REFUSED = "!";

  /** The identity of a call whose caller was refused, saying why. */
  public static String refusedIdentity(String why) {
    return REFUSED + why;
  }

  /** Why a call was refused, if its identity says it was. */
  public static Optional<String> refusal(String identity) {
    return identity != null && identity.startsWith(REFUSED)
        ? Optional.of(identity.substring(REFUSED.length()))
        : Optional.empty();
  }

  /** The caller a peer identity names; null for one this authenticator did not make. */
  public static Caller fromPeerIdentity(String identity) {
    if (identity == null) {
      return null;
    }
    String[] fields = identity.split(" ", -1);
    if (fields.length != 5 || !fields[0].equals(MARK)) {
      return null;
    }
    try {
      return new Caller(
          decode(fields[3]),
          Role.parse(fields[1]),
          decode(fields[2]),
          DatasetScope.parse(decode(fields[4])));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String encode(String field) {
    return URLEncoder.encode(field, StandardCharsets.UTF_8);
  }

  private static String decode(String field) {
    return URLDecoder.decode(field, StandardCharsets.UTF_8);
  }
}
