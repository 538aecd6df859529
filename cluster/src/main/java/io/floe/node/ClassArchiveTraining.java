package io.floe.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The training run of the class-data-sharing archive that makes a node start faster ({@code ./floe
 * node} and the image build run it as {@code floe node --train-class-archive} under {@code
 * -XX:ArchiveClassesAtExit}): a node on its own, on free ports of 127.0.0.1, started through the
 * same path as a real one, asked for {@code /ready} and a Flight {@code list} until both answer,
 * then shut down in order. The JVM writes every class it loaded into the archive when it exits.
 *
 * <p>Whatever the environment configures (seed nodes, Kubernetes discovery, a state directory, TLS,
 * ports) is overridden: the run must not join a real cluster, take a node's ports or touch its
 * state. The archive holds classes only, never settings.
 */
final class ClassArchiveTraining {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);

  private ClassArchiveTraining() {}

  /** Runs the training node until it is ready and has answered once; exits normally. */
  static void run(Config settings, StartupTimeline timeline) {
    int management = freePort();
    Config isolated =
        ConfigFactory.parseMap(
                Map.ofEntries(
                    Map.entry("floe.flight.port", 0),
                    Map.entry("floe.flight.bind-host", "127.0.0.1"),
                    Map.entry("floe.flight.advertised-host", ""),
                    Map.entry("floe.state.dir", ""),
                    Map.entry("floe.cluster.discovery", "seed-nodes"),
                    Map.entry("floe.management.enabled", true),
                    Map.entry("floe.security.auth.tokens-file", ""),
                    Map.entry("floe.security.auth.anonymous", "reader"),
                    Map.entry("floe.security.tls.cert-file", ""),
                    Map.entry("floe.security.tls.key-file", ""),
                    Map.entry("floe.security.tls.client-ca-file", ""),
                    Map.entry("floe.gateway.warm-up", "0s"),
                    Map.entry("pekko.cluster.seed-nodes", java.util.List.of()),
                    Map.entry("pekko.cluster.role.data.min-nr-of-members", 1),
                    Map.entry("pekko.remote.artery.transport", "tcp"),
                    Map.entry("pekko.remote.artery.canonical.hostname", "127.0.0.1"),
                    Map.entry("pekko.remote.artery.canonical.port", 0),
                    Map.entry("pekko.remote.artery.bind.hostname", "127.0.0.1"),
                    Map.entry("pekko.management.http.hostname", "127.0.0.1"),
                    Map.entry("pekko.management.http.bind-hostname", "127.0.0.1"),
                    Map.entry("pekko.management.http.port", management)))
            .withFallback(settings)
            .resolve();
    try (FloeNode node = FloeNode.start(isolated, timeline)) {
      long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
      URI ready = URI.create("http://127.0.0.1:" + management + "/ready");
      while (!answers(ready)) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("The training node was not ready in " + READY_TIMEOUT);
        }
        sleep();
      }
      try (BufferAllocator allocator = new RootAllocator();
          FlightClient client = FlightClient.builder(allocator, node.location()).build()) {
        client.doAction(new Action("list", new byte[0])).forEachRemaining(result -> {});
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static boolean answers(URI uri) {
    try {
      HttpURLConnection connection = (HttpURLConnection) uri.toURL().openConnection();
      connection.setConnectTimeout(2000);
      connection.setReadTimeout(2000);
      try {
        return connection.getResponseCode() == 200;
      } finally {
        connection.disconnect();
      }
    } catch (IOException e) {
      return false;
    }
  }

  private static void sleep() {
    try {
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for the training node", e);
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
