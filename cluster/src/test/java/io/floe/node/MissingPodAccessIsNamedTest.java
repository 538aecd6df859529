package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.floe.tls.PemFiles;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose ServiceAccount may not list pods says so in one line that names the permission, the
 * ServiceAccount, the namespace and the Role that grants it, from what an API server over TLS on
 * 127.0.0.1 answers (here a stand-in giving the real server's 403 Status body; the real server is
 * python/tests/test_kubernetes.py's).
 */
class MissingPodAccessIsNamedTest {
  private static final String SUBJECT = "system:serviceaccount:data:floe";
  private static final String FORBIDDEN =
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
          + "\"message\":\"pods is forbidden: User \\\""
          + SUBJECT
          + "\\\" cannot list resource \\\"pods\\\" in API group \\\"\\\" in the namespace"
          + " \\\"data\\\"\",\"reason\":\"Forbidden\",\"details\":{\"kind\":\"pods\"},\"code\":403}";

  @TempDir static Path dir;
  private static Path ca;
  private static SSLContext tls;
  private HttpsServer api;
  private final AtomicReference<Integer> status = new AtomicReference<>(200);
  private final List<String> requests = new ArrayList<>();
  private KubernetesPodAccess.Settings settings;

  /** The stand-in API server's certificate, from a CA of the test's own, once for the class. */
  @BeforeAll
  static void makeCertificate() throws Exception {
    TestCertificates authority = TestCertificates.authority(dir, "api-ca");
    TestCertificates.Pair server = authority.issue("api", true);
    ca = authority.cert();
    KeyStore keys = KeyStore.getInstance("PKCS12");
    keys.load(null, null);
    keys.setKeyEntry(
        "api",
        PemFiles.privateKey(server.key()),
        new char[0],
        PemFiles.certificates(server.cert()));
    KeyManagerFactory keyManagers =
        KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keyManagers.init(keys, new char[0]);
    tls = SSLContext.getInstance("TLS");
    tls.init(keyManagers.getKeyManagers(), null, null);
  }

  @BeforeEach
  void startApiServer() throws Exception {
    api = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    api.setHttpsConfigurator(new HttpsConfigurator(tls));
    api.createContext(
        "/",
        exchange -> {
          synchronized (requests) {
            requests.add(
                exchange.getRequestURI()
                    + " "
                    + exchange.getRequestHeaders().getFirst("Authorization"));
          }
          byte[] body =
              (status.get() == 200 ? "{\"kind\":\"PodList\",\"items\":[]}" : FORBIDDEN)
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(status.get(), body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    api.start();

    Path token = dir.resolve("token");
    Files.writeString(token, jwt(SUBJECT));
    settings =
        new KubernetesPodAccess.Settings(
            "127.0.0.1", api.getAddress().getPort(), ca, token, "data", "app=floe", "floe");
  }

  @AfterEach
  void stopApiServer() {
    api.stop(0);
  }

  @Test
  void aForbiddenPodListNamesThePermissionTheServiceAccountAndTheRole() throws Exception {
    status.set(403);

    KubernetesPodAccess.Outcome outcome =
        KubernetesPodAccess.check(settings).get(30, TimeUnit.SECONDS);

    assertThat(outcome).isInstanceOf(KubernetesPodAccess.Refused.class);
    assertThat(outcome.refused()).isTrue();
    assertThat(outcome.describe())
        .startsWith("Kubernetes discovery cannot list pods in namespace data: ")
        .contains("ServiceAccount " + SUBJECT + " lacks permission (HTTP 403: pods is forbidden")
        .contains("grant get, list and watch on pods in namespace data")
        .contains("the Role floe-pod-reader and its RoleBinding")
        .doesNotContain(jwt(SUBJECT));
  }

  @Test
  void aPodListTheServerAllowsIsNoError() throws Exception {
    KubernetesPodAccess.Outcome outcome =
        KubernetesPodAccess.check(settings).get(30, TimeUnit.SECONDS);

    assertThat(outcome).isInstanceOf(KubernetesPodAccess.Allowed.class);
    assertThat(outcome.refused()).isFalse();
    assertThat(outcome.describe())
        .isEqualTo(
            "Kubernetes discovery: ServiceAccount "
                + SUBJECT
                + " may list the pods labelled app=floe in namespace data");
    assertThat(requests)
        .containsExactly(
            "/api/v1/namespaces/data/pods?limit=1&labelSelector=app%3Dfloe Bearer " + jwt(SUBJECT));
  }

  @Test
  void withoutTheApiServersAddressTheCheckIsInconclusive() throws Exception {
    KubernetesPodAccess.Settings outsideAPod =
        new KubernetesPodAccess.Settings(
            "", -1, settings.caPath(), settings.tokenPath(), "data", "app=floe", "floe");

    KubernetesPodAccess.Outcome outcome =
        KubernetesPodAccess.check(outsideAPod).get(30, TimeUnit.SECONDS);

    assertThat(outcome).isInstanceOf(KubernetesPodAccess.Inconclusive.class);
    assertThat(requests).isEmpty();
  }

  /** A token shaped like a ServiceAccount's (the signature is not checked here). */
  private static String jwt(String subject) {
    Base64.Encoder encoder = Base64.getUrlEncoder().withoutPadding();
    String claims = "{\"iss\":\"https://kubernetes.default.svc\",\"sub\":\"" + subject + "\"}";
    return encoder.encodeToString("{\"alg\":\"RS256\"}".getBytes(StandardCharsets.UTF_8))
        + "."
        + encoder.encodeToString(claims.getBytes(StandardCharsets.UTF_8))
        + ".c2lnbmF0dXJl";
  }
}
