package io.floe.auth;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;

/**
 * How a node authenticates callers: the token file, if any, the reviewer of Kubernetes
 * ServiceAccount tokens, if enabled, and the role of callers without a token, if they are let in at
 * all (only for local use: the demo, tests).
 */
public record AuthSettings(
    Optional<TokenFile> tokens, Optional<Role> anonymous, Optional<TokenReviewer> reviewer) {
  /**
   * From settings: a token file path (empty for none) and {@code none}, reader or operator (not
   * admin).
   */
  public static AuthSettings of(String tokensFile, String anonymous) {
    Optional<TokenFile> tokens =
        tokensFile == null || tokensFile.isBlank()
            ? Optional.empty()
            : Optional.of(TokenFile.read(Path.of(tokensFile), Clock.systemUTC()));
    Optional<Role> role =
        anonymous == null || anonymous.isBlank() || anonymous.trim().equalsIgnoreCase("none")
            ? Optional.empty()
            : Optional.of(Role.parse(anonymous));
    if (role.isPresent() && role.get() == Role.ADMIN) {
      throw new IllegalArgumentException(
          "floe.security.auth.anonymous may be none, reader or operator, not admin: a caller"
              + " without a token must not change every tenant's datasets");
    }
    if (tokens.isEmpty() && role.isEmpty()) {
      throw new IllegalArgumentException(
          "No caller could reach this node: set floe.security.auth.tokens-file"
              + " (FLOE_AUTH_TOKENS_FILE) or, for local use only, floe.security.auth.anonymous"
              + " (FLOE_AUTH_ANONYMOUS=operator)");
    }
    return new AuthSettings(tokens, role, Optional.empty());
  }

  /**
   * These settings, with ServiceAccount tokens reviewed by {@code reviewer}; the token file's
   * {@code system:serviceaccount:...} lines say which ServiceAccounts have which role.
   */
  public AuthSettings withReviewer(TokenReviewer reviewer) {
    if (tokens.isEmpty()) {
      throw new IllegalArgumentException(
          "Kubernetes ServiceAccount callers (floe.security.auth.kubernetes.enabled) need"
              + " floe.security.auth.tokens-file: its 'system:serviceaccount:<namespace>:<name>'"
              + " lines give ServiceAccounts their roles");
    }
    return new AuthSettings(tokens, anonymous, Optional.of(reviewer));
  }

  /** Everyone is an operator: for tests of other things and the local demo. */
  public static AuthSettings anonymousOperator() {
    return new AuthSettings(Optional.empty(), Optional.of(Role.OPERATOR), Optional.empty());
  }
}
