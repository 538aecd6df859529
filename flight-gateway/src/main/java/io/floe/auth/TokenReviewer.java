package io.floe.auth;

import java.util.Optional;

/**
 * Checks a bearer token the token file does not have with whoever issued it: on Kubernetes, the API
 * server's TokenReview of a pod's projected ServiceAccount token. The node's implementation lives
 * with the rest of its Kubernetes access ({@code io.floe.node}).
 */
public interface TokenReviewer {
  /**
   * The user name the token authenticates, such as {@code system:serviceaccount:team-a:trainer};
   * empty when the issuer does not accept it (unknown, expired, of another audience). Answers may
   * be cached for a short time; the token itself is never logged.
   *
   * @throws RuntimeException when the issuer could not be asked (the call is refused
   *     UNAUTHENTICATED all the same, saying the review failed)
   */
  Optional<String> review(String token);
}
