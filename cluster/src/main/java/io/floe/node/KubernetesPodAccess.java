package io.floe.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks once, as a node starts with Kubernetes API discovery, that its ServiceAccount may do what
 * pekko-discovery-kubernetes-api will do every second of cluster bootstrap: list the pods labelled
 * {@code app=<service>} in its namespace. Pekko answers a refusal with a WARN ("check RBAC
 * settings") among bootstrap's retries; this logs one ERROR that names the permission, the
 * ServiceAccount, the namespace and the Role that grants it.
 *
 * <p>It does not stop the node: bootstrap keeps retrying, and a RoleBinding created later lets the
 * node join without a restart. The token is sent to the API server only and never logged; the
 * ServiceAccount's name comes from the token's {@code sub} claim (not a secret).
 */
final class KubernetesPodAccess {
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesPodAccess.class);
  private static final String DISCOVERY = "pekko.discovery.kubernetes-api.";
  private static final String UNSET_NAMESPACE = "<pod-namespace>";
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What discovery asks the API server, read from Pekko's settings and the pod's environment. */
  record Settings(
      String host,
      int port,
      Path caPath,
      Path tokenPath,
      String namespace,
      String labelSelector,
      String serviceName) {

    /**
     * The settings pekko-discovery-kubernetes-api itself uses (its defaults in its reference.conf),
     * with the API server's address from the variables the kubelet sets.
     */
    static Settings from(Config config, Map<String, String> environment) {
      String hostVariable = config.getString(DISCOVERY + "api-service-host-env-name");
      String portVariable = config.getString(DISCOVERY + "api-service-port-env-name");
      String host = environment.getOrDefault(hostVariable, "");
      String port = environment.getOrDefault(portVariable, "");
      String serviceName =
          config.getString(
              "pekko.management.cluster.bootstrap.contact-point-discovery.service-name");
      return new Settings(
          host,
          port.isEmpty() ? -1 : Integer.parseInt(port.trim()),
          Path.of(config.getString(DISCOVERY + "api-ca-path")),
          Path.of(config.getString(DISCOVERY + "api-token-path")),
          namespace(config),
          String.format(config.getString(DISCOVERY + "pod-label-selector"), serviceName),
          serviceName);
    }

    private static String namespace(Config config) {
      String configured = config.getString(DISCOVERY + "pod-namespace");
      if (!UNSET_NAMESPACE.equals(configured)) {
        return configured;
      }
      Path path = Path.of(config.getString(DISCOVERY + "pod-namespace-path"));
      try {
        return Files.readString(path).trim();
      } catch (IOException e) {
        return "default";
      }
    }

    URI pods() {
      String address = host.contains(":") ? "[" + host + "]" : host;
      return URI.create(
          "https://"
              + address
              + ":"
              + port
              + "/api/v1/namespaces/"
              + namespace
              + "/pods?limit=1&labelSelector="
              + URLEncoder.encode(labelSelector, StandardCharsets.UTF_8));
    }
  }

  /** The API server's answer to a pod list with the node's token. */
  sealed interface Outcome {
    /** What the node logs about it; {@link #refused} says whether that is an error. */
    String describe();

    default boolean refused() {
      return false;
    }
  }

  /** The list succeeded: discovery can work. */
  record Allowed(Settings settings, String subject) implements Outcome {
    @Override
    public String describe() {
      return String.format(
          "Kubernetes discovery: %s may list the pods labelled %s in namespace %s",
          subject, settings.labelSelector(), settings.namespace());
    }
  }

  /** 401 or 403: the token is not accepted, or its ServiceAccount lacks the permission. */
  record Refused(Settings settings, String subject, int status, String apiMessage)
      implements Outcome {
    @Override
    public boolean refused() {
      return true;
    }

    @Override
    public String describe() {
      String namespace = settings.namespace();
      if (status == 401) {
        return String.format(
            "Kubernetes discovery cannot list pods in namespace %s: the API server does not accept"
                + " the ServiceAccount token in %s (HTTP 401: %s). This node finds no peers and"
                + " joins no cluster until it has a valid token.",
            namespace, settings.tokenPath(), apiMessage);
      }
      return String.format(
          "Kubernetes discovery cannot list pods in namespace %s: %s lacks permission (HTTP %d: %s)."
              + " Cluster bootstrap lists the pods labelled %s; grant get, list and watch on pods"
              + " in namespace %s to that ServiceAccount (the Role %s-pod-reader and its"
              + " RoleBinding, which the Helm chart and k8s/base create). Until then this node"
              + " finds no peers and joins no cluster.",
          namespace,
          subject,
          status,
          apiMessage,
          settings.labelSelector(),
          namespace,
          settings.serviceName());
    }
  }

  /** No answer, or not one about permissions: Pekko's own retries and logs take it from here. */
  record Inconclusive(Settings settings, String reason) implements Outcome {
    @Override
    public String describe() {
      return String.format(
          "Kubernetes discovery: could not check pod access in namespace %s at %s: %s",
          settings.namespace(), settings.pods(), reason);
    }
  }

  private KubernetesPodAccess() {}

  /** Checks in the background and logs the outcome: an ERROR when the API server refuses. */
  static CompletableFuture<Outcome> checkAndLog(Config config) {
    Settings settings;
    try {
      settings = Settings.from(config, System.getenv());
    } catch (RuntimeException e) {
      LOG.warn("Kubernetes discovery: could not read its settings to check pod access", e);
      return CompletableFuture.completedFuture(null);
    }
    return check(settings)
        .whenComplete(
            (outcome, failure) -> {
              if (outcome instanceof Refused) {
                LOG.error(outcome.describe());
              } else if (outcome instanceof Inconclusive) {
                LOG.warn(outcome.describe());
              } else if (outcome != null) {
                LOG.info(outcome.describe());
              }
            });
  }

  /** Lists at most one matching pod with the node's token and tells what the answer means. */
  static CompletableFuture<Outcome> check(Settings settings) {
    if (settings.host().isEmpty() || settings.port() <= 0) {
      return CompletableFuture.completedFuture(
          new Inconclusive(
              settings, "the API server's host and port variables are not set (not in a pod?)"));
    }
    String token;
    HttpClient client;
    try {
      token = Files.readString(settings.tokenPath()).trim();
      client =
          HttpClient.newBuilder()
              .sslContext(trusting(settings.caPath()))
              .connectTimeout(TIMEOUT)
              .build();
    } catch (IOException | GeneralSecurityException e) {
      return CompletableFuture.completedFuture(new Inconclusive(settings, e.toString()));
    }
    HttpRequest request =
        HttpRequest.newBuilder(settings.pods())
            .timeout(TIMEOUT)
            .header("Authorization", "Bearer " + token)
            .header("Accept", "application/json")
            .GET()
            .build();
    return client
        .sendAsync(request, HttpResponse.BodyHandlers.ofString())
        .handle(
            (response, failure) -> {
              if (failure != null) {
                return new Inconclusive(settings, String.valueOf(failure.getMessage()));
              }
              int status = response.statusCode();
              if (status == 200) {
                return new Allowed(settings, subject(token));
              }
              String message = apiMessage(response.body());
              if (status == 401 || status == 403) {
                return new Refused(settings, subject(token), status, message);
              }
              return new Inconclusive(settings, "HTTP " + status + ": " + message);
            });
  }

  /** The {@code message} of a Kubernetes Status body, or the body itself. */
  private static String apiMessage(String body) {
    try {
      JsonNode message = JSON.readTree(body).path("message");
      if (message.isTextual()) {
        return message.asText();
      }
    } catch (IOException e) {
      // not JSON: the body as it is
    }
    return body.length() > 300 ? body.substring(0, 300) + "..." : body;
  }

  /**
   * Whom the token names, e.g. {@code system:serviceaccount:data:floe}: the JWT's {@code sub}
   * claim, read without checking the signature (the API server does that).
   */
  static String subject(String token) {
    String[] parts = token.split("\\.");
    if (parts.length == 3) {
      try {
        JsonNode claims = JSON.readTree(Base64.getUrlDecoder().decode(parts[1]));
        if (claims.path("sub").isTextual()) {
          return "ServiceAccount " + claims.path("sub").asText();
        }
      } catch (IOException | IllegalArgumentException e) {
        // not a JWT we can read
      }
    }
    return "the node's ServiceAccount";
  }

  static SSLContext trusting(Path caPath) throws IOException, GeneralSecurityException {
    KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
    trusted.load(null, null);
    try (InputStream in = Files.newInputStream(caPath)) {
      int i = 0;
      for (Certificate certificate :
          CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trusted.setCertificateEntry("ca-" + i++, certificate);
      }
    }
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(trusted);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, trust.getTrustManagers(), null);
    return context;
  }
}
