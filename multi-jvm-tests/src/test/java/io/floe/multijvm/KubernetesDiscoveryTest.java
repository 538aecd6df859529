package io.floe.multijvm;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import io.floe.client.FloeClient;
import io.floe.demo.NodeProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster bootstrap through Kubernetes API discovery, against a stand-in API server on 127.0.0.1
 * (WireMock over TLS, with a certificate made for the test) that answers the pod list the way the
 * real API does. Two node processes, given no seed nodes, find each other through it and form one
 * cluster.
 */
class KubernetesDiscoveryTest {
  private static final String NAMESPACE = "floe-test";
  private static final String TOKEN = "test-service-account-token";

  @TempDir Path dir;

  @Test
  void nodesFormAClusterFromThePodList() throws Exception {
    Path keystore = dir.resolve("api.p12");
    Path ca = dir.resolve("ca.pem");
    Path token = dir.resolve("token");
    Files.writeString(token, TOKEN);
    keytool(
        "-genkeypair",
        "-alias",
        "api",
        "-keyalg",
        "RSA",
        "-keysize",
        "2048",
        "-validity",
        "2",
        "-dname",
        "CN=127.0.0.1",
        "-ext",
        "SAN=ip:127.0.0.1",
        "-keystore",
        keystore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        "changeit",
        "-keypass",
        "changeit");
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        "api",
        "-keystore",
        keystore.toString(),
        "-storepass",
        "changeit",
        "-file",
        ca.toString());

    int[] management = {NodeProcess.freePort(), NodeProcess.freePort()};
    WireMockServer api =
        new WireMockServer(
            options()
                .bindAddress("127.0.0.1")
                .httpDisabled(true)
                .httpsPort(0)
                .keystorePath(keystore.toString())
                .keystorePassword("changeit")
                .keyManagerPassword("changeit")
                .keystoreType("PKCS12"));
    api.start();
    List<NodeProcess> nodes = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator()) {
      api.stubFor(
          get(urlPathEqualTo("/api/v1/namespaces/" + NAMESPACE + "/pods"))
              .withQueryParam("labelSelector", equalTo("app=floe"))
              .willReturn(
                  aResponse()
                      .withStatus(200)
                      .withHeader("Content-Type", "application/json")
                      .withBody(podList(management))));
      Map<String, String> environment =
          Map.of(
              "KUBERNETES_SERVICE_HOST",
              "127.0.0.1",
              "KUBERNETES_SERVICE_PORT",
              Integer.toString(api.httpsPort()));
      for (int i = 0; i < 2; i++) {
        nodes.add(
            NodeProcess.start(
                "k8s-node" + i,
                NodeProcess.freePort(),
                0,
                settings(management[i], ca, token),
                environment,
                System.getProperty(
                    "surefire.test.class.path", System.getProperty("java.class.path")),
                Path.of("target", "node-logs")));
      }
      for (NodeProcess node : nodes) {
        try (FloeClient client = FloeClient.connect(allocator, node.location())) {
          Awaitility.await()
              .atMost(120, TimeUnit.SECONDS)
              .pollInterval(500, TimeUnit.MILLISECONDS)
              .ignoreExceptions()
              .until(() -> client.cluster().membersUp() == 2);
        }
      }
      api.verify(
          getRequestedFor(urlPathEqualTo("/api/v1/namespaces/" + NAMESPACE + "/pods"))
              .withHeader("Authorization", equalTo("Bearer " + TOKEN)));
    } finally {
      for (NodeProcess node : nodes) {
        node.close();
      }
      api.stop();
    }
  }

  private static Map<String, String> settings(int managementPort, Path ca, Path token) {
    Map<String, String> settings = new java.util.HashMap<>();
    settings.put(NodeProcess.MANAGEMENT_PORT, Integer.toString(managementPort));
    settings.put("floe.cluster.discovery", "kubernetes");
    settings.put("pekko.discovery.kubernetes-api.pod-namespace", NAMESPACE);
    settings.put("pekko.discovery.kubernetes-api.api-ca-path", ca.toString());
    settings.put("pekko.discovery.kubernetes-api.api-token-path", token.toString());
    settings.put("pekko.discovery.kubernetes-api.use-raw-ip", "true");
    settings.put("pekko.management.cluster.bootstrap.contact-point-discovery.stable-margin", "1s");
    settings.put("pekko.management.cluster.bootstrap.contact-point-discovery.interval", "500ms");
    String logback = System.getProperty("floe.test.node-logback");
    if (logback != null) {
      settings.put("logback.configurationFile", logback);
    }
    return settings;
  }

  /** A pod list as the API server answers it: two running pods with a named management port. */
  private static String podList(int[] managementPorts) {
    StringBuilder items = new StringBuilder();
    for (int i = 0; i < managementPorts.length; i++) {
      if (i > 0) {
        items.append(',');
      }
      items.append(
          String.format(
              "{\"metadata\":{\"name\":\"floe-%d\",\"namespace\":\"%s\",\"labels\":{\"app\":\"floe\"}},"
                  + "\"spec\":{\"containers\":[{\"name\":\"floe\",\"ports\":["
                  + "{\"name\":\"flight\",\"containerPort\":47470,\"protocol\":\"TCP\"},"
                  + "{\"name\":\"management\",\"containerPort\":%d,\"protocol\":\"TCP\"}]}]},"
                  + "\"status\":{\"phase\":\"Running\",\"podIP\":\"127.0.0.1\","
                  + "\"containerStatuses\":[{\"name\":\"floe\",\"ready\":false,\"restartCount\":0,"
                  + "\"image\":\"floe:test\",\"started\":true,"
                  + "\"state\":{\"running\":{\"startedAt\":\"2026-11-22T01:00:00Z\"}}}]}}",
              i, NAMESPACE, managementPorts[i]));
    }
    return "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},"
        + "\"items\":["
        + items
        + "]}";
  }

  private static void keytool(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor()).as("keytool %s: %s", args[0], output).isZero();
  }
}
