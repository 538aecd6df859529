package io.floe.auth;

/**
 * Who made a call, as the authenticator established it: a name (from the token file, or {@code
 * anonymous}) and a role. Travels through Flight as the call's peer identity, {@code role:name}.
 */
public record Caller(String name, Role role) {
  public static final String ANONYMOUS = "anonymous";

  public String peerIdentity() {
    return role.wireName() + ":" + name;
  }

  /** The mark of a refused call's identity, followed by why it was refused. */
  private static final String REFUSED = "!";

  /** The identity of a call whose caller was refused, saying why. */
  public static String refusedIdentity(String why) {
    return REFUSED + why;
  }

  /** Why a call was refused, if its identity says it was. */
  public static java.util.Optional<String> refusal(String identity) {
    return identity != null && identity.startsWith(REFUSED)
        ? java.util.Optional.of(identity.substring(REFUSED.length()))
        : java.util.Optional.empty();
  }

  /** The caller a peer identity names; null for one this authenticator did not make. */
  public static Caller fromPeerIdentity(String identity) {
    if (identity == null) {
      return null;
    }
    int colon = identity.indexOf(':');
    if (colon < 0) {
      return null;
    }
    try {
      return new Caller(identity.substring(colon + 1), Role.parse(identity.substring(0, colon)));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
