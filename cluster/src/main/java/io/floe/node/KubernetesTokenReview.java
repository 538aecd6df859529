package io.floe.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import io.floe.auth.TokenFile;
import io.floe.auth.TokenReviewer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reviews callers' Kubernetes ServiceAccount tokens with the API server's TokenReview ({@code POST
 * /apis/authentication.k8s.io/v1/tokenreviews}), as the node itself: with its own in-cluster
 * ServiceAccount token and CA, found where pekko-discovery-kubernetes-api finds them ({@link
 * KubernetesPodAccess.Settings}). The node's ServiceAccount needs {@code create} on {@code
 * tokenreviews} (the ClusterRole {@code system:auth-delegator}; the Helm chart binds it when
 * Kubernetes callers are enabled).
 *
 * <p>A token is accepted only if the API server authenticates it for the configured audience (a
 * projected token minted for another audience, such as the API server's own, is refused) and it
 * names a ServiceAccount. Answers, accepted or not, are cached by the token's SHA-256 digest for
 * {@code cache-ttl} (and never past the token's own expiry), since a caller presents its token on
 * every call; the cache holds digests, never tokens, and no token is ever logged.
 */
final class KubernetesTokenReview implements TokenReviewer {
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesTokenReview.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  /** Reviews kept at most; beyond it the cache starts again (a flood of distinct bad tokens). */
  private static final int CACHE_MAX = 10_000;

  /** Typed settings of {@code floe.security.auth.kubernetes}, read once. */
  record Settings(boolean enabled, String audience, Duration cacheTtl) {
    static Settings from(Config kubernetes) {
      String audience = kubernetes.getString("audience").trim();
      Duration ttl = kubernetes.getDuration("cache-ttl");
      if (audience.isEmpty()) {
        throw new IllegalArgumentException(
            "floe.security.auth.kubernetes.audience is empty: ServiceAccount tokens must be"
                + " minted for Floe's own audience (a projected token's 'audience')");
      }
      if (ttl.isNegative()) {
        throw new IllegalArgumentException(
            "Invalid floe.security.auth.kubernetes.cache-ttl " + ttl + " (must be >= 0)");
      }
      return new Settings(kubernetes.getBoolean("enabled"), audience, ttl);
    }
  }

  private record Review(Optional<String> user, long expiresAtNanos) {}

  private final KubernetesPodAccess.Settings api;
  private final Settings settings;
  private final HttpClient client;
  private final Map<String, Review> cache = new ConcurrentHashMap<>();

  private KubernetesTokenReview(
      KubernetesPodAccess.Settings api, Settings settings, HttpClient client) {
    this.api = api;
    this.settings = settings;
    this.client = client;
  }

  /**
   * The reviewer for a node in a pod.
   *
   * @throws IllegalArgumentException when the API server's address or CA cannot be found
   */
  static KubernetesTokenReview start(
      Config config, Map<String, String> environment, Settings settings) {
    KubernetesPodAccess.Settings api = KubernetesPodAccess.Settings.from(config, environment);
    if (api.host().isEmpty() || api.port() <= 0) {
      throw new IllegalArgumentException(
          "floe.security.auth.kubernetes.enabled needs the Kubernetes API server: the"
              + " KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT variables are not set (not"
              + " in a pod?)");
    }
    try {
      HttpClient client =
          HttpClient.newBuilder()
              .sslContext(KubernetesPodAccess.trusting(api.caPath()))
              .connectTimeout(TIMEOUT)
              .build();
      LOG.info(
          "Kubernetes callers: ServiceAccount tokens of audience '{}' reviewed by {}:{}",
          settings.audience(),
          api.host(),
          api.port());
      return new KubernetesTokenReview(api, settings, client);
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "Cannot read the Kubernetes API server's CA " + api.caPath() + ": " + e, e);
    }
  }

  @Override
  public Optional<String> review(String token) {
    String key = digest(token);
    long now = System.nanoTime();
    Review known = cache.get(key);
    if (known != null && now - known.expiresAtNanos() < 0) {
      return known.user();
    }
    Optional<String> user = ask(token);
    if (cache.size() >= CACHE_MAX) {
      cache.clear();
    }
    cache.put(key, new Review(user, now + cachedFor(token).toNanos()));
    return user;
  }

  /** The cache's time, but not past the token's expiry ({@code exp}, checked by the server). */
  private Duration cachedFor(String token) {
    Duration ttl = settings.cacheTtl();
    String[] parts = token.split("\\.");
    if (parts.length == 3) {
      try {
        JsonNode exp = JSON.readTree(Base64.getUrlDecoder().decode(parts[1])).path("exp");
        if (exp.canConvertToLong()) {
          Duration left =
              Duration.ofSeconds(exp.asLong() - System.currentTimeMillis() / 1000).minusSeconds(1);
          return left.isNegative() ? Duration.ZERO : left.compareTo(ttl) < 0 ? left : ttl;
        }
      } catch (IOException | IllegalArgumentException e) {
        // Not a JWT: the API server has refused it, or will; the cache's time holds.
      }
    }
    return ttl;
  }

  private Optional<String> ask(String token) {
    ObjectNode review = JSON.createObjectNode();
    review.put("apiVersion", "authentication.k8s.io/v1");
    review.put("kind", "TokenReview");
    ObjectNode spec = review.putObject("spec");
    spec.put("token", token);
    spec.putArray("audiences").add(settings.audience());
    HttpResponse<String> response;
    try {
      String own = Files.readString(api.tokenPath()).trim(); // the kubelet rotates it
      response =
          client.send(
              HttpRequest.newBuilder(reviews())
                  .timeout(TIMEOUT)
                  .header("Authorization", "Bearer " + own)
                  .header("Content-Type", "application/json")
                  .header("Accept", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(review.toString()))
                  .build(),
              HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException("TokenReview request failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("TokenReview request interrupted", e);
    }
    if (response.statusCode() / 100 != 2) {
      throw new IllegalStateException(
          String.format(
              "the API server answered TokenReview HTTP %d (the node's ServiceAccount needs"
                  + " 'create' on tokenreviews: ClusterRole system:auth-delegator)",
              response.statusCode()));
    }
    JsonNode status;
    try {
      status = JSON.readTree(response.body()).path("status");
    } catch (IOException e) {
      throw new IllegalStateException("TokenReview answer is not JSON", e);
    }
    boolean forUs = false;
    for (JsonNode audience : status.path("audiences")) {
      forUs |= settings.audience().equals(audience.asText());
    }
    String user = status.path("user").path("username").asText("");
    if (!status.path("authenticated").asBoolean(false)
        || !forUs
        || !user.startsWith(TokenFile.SERVICE_ACCOUNT_PREFIX)) {
      LOG.debug(
          "TokenReview refused a token: {}",
          status.path("error").asText("not a ServiceAccount of this audience"));
      return Optional.empty();
    }
    return Optional.of(user);
  }

  private URI reviews() {
    String host = api.host().contains(":") ? "[" + api.host() + "]" : api.host();
    return URI.create(
        "https://" + host + ":" + api.port() + "/apis/authentication.k8s.io/v1/tokenreviews");
  }

  private static String digest(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }
}
