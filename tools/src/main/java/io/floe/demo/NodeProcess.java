package io.floe.demo;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Location;

/**
 * A data node running as its own JVM on 127.0.0.1, for the demo's local cluster and the multi-JVM
 * tests. Its output goes to a log file. {@link #close()} stops it (SIGTERM, then SIGKILL after 60
 * s), so nothing is left behind.
 */
public final class NodeProcess implements AutoCloseable {
  public static final String MANAGEMENT_PORT = "pekko.management.http.port";

  /** The setting of the role of callers without a token. */
  public static final String ANONYMOUS = "floe.security.auth.anonymous";

  /** The setting of where callers may load tables from. */
  public static final String LOCATIONS = "floe.security.allowed-locations";

  private static final java.util.Set<Integer> HANDED_OUT =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final String name;
  private final int flightPort;
  private final int remotePort;
  private final int managementPort;
  private final Path log;
  private final Process process;

  private NodeProcess(
      String name, int flightPort, int remotePort, int managementPort, Path log, Process process) {
    this.name = name;
    this.flightPort = flightPort;
    this.remotePort = remotePort;
    this.managementPort = managementPort;
    this.log = log;
    this.process = process;
  }

  /**
   * Starts a node that joins the cluster through {@code seedRemotePort}.
   *
   * @param settings further -D settings (config path → value)
   */
  public static NodeProcess start(
      String name,
      int remotePort,
      int seedRemotePort,
      Map<String, String> settings,
      String classpath,
      Path logs)
      throws IOException {
    return start(name, remotePort, seedRemotePort, settings, Map.of(), classpath, logs);
  }

  /**
   * Starts a node with extra environment variables. With {@code seedRemotePort <= 0} the node is
   * given no seed nodes (it finds its peers through discovery). A management port given in {@code
   * settings} is used instead of a free one.
   */
  public static NodeProcess start(
      String name,
      int remotePort,
      int seedRemotePort,
      Map<String, String> settings,
      Map<String, String> environment,
      String classpath,
      Path logs)
      throws IOException {
    int flightPort = freePort();
    int managementPort =
        settings.containsKey(MANAGEMENT_PORT)
            ? Integer.parseInt(settings.get(MANAGEMENT_PORT))
            : freePort();
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("--add-opens=java.base/java.nio=ALL-UNNAMED");
    command.add("--add-opens=java.base/sun.nio.ch=ALL-UNNAMED");
    command.add("-Xmx384m");
    command.add("-XX:MaxDirectMemorySize=1g");
    command.add("-XX:+UseSerialGC");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-Dfloe.flight.bind-host=127.0.0.1");
    if (!settings.containsKey(ANONYMOUS) && !environment.containsKey("FLOE_AUTH_ANONYMOUS")) {
      // Local clusters of the demo and tests: callers need no token unless a test says otherwise.
      command.add("-D" + ANONYMOUS + "=operator");
    }
    if (!settings.containsKey(LOCATIONS) && !environment.containsKey("FLOE_ALLOWED_LOCATIONS")) {
      // Local tables in temporary directories, and test object stores on 127.0.0.1.
      command.add("-D" + LOCATIONS + "=*");
    }
    command.add("-Dfloe.flight.port=" + flightPort);
    command.add("-Dpekko.management.http.hostname=127.0.0.1");
    command.add("-Dpekko.management.http.port=" + managementPort);
    command.add("-Dpekko.remote.artery.canonical.hostname=127.0.0.1");
    command.add("-Dpekko.remote.artery.canonical.port=" + remotePort);
    if (seedRemotePort > 0) {
      command.add("-Dpekko.cluster.seed-nodes.0=pekko://floe@127.0.0.1:" + seedRemotePort);
    }
    settings.forEach((key, value) -> command.add("-D" + key + "=" + value));
    command.add("-cp");
    command.add(classpath);
    command.add("io.floe.node.Main");
    Files.createDirectories(logs);
    Path log = logs.resolve(name + "-" + System.currentTimeMillis() + ".log");
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().putAll(environment);
    Process process = builder.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    return new NodeProcess(name, flightPort, remotePort, managementPort, log, process);
  }

  /** A fresh ticket secret for a local cluster's nodes to share. */
  public static String randomSecret() {
    byte[] bytes = new byte[24];
    new java.security.SecureRandom().nextBytes(bytes);
    return java.util.HexFormat.of().formatHex(bytes);
  }

  /**
   * A loopback port free now and never handed out before by this JVM. A node binds its ports only
   * once its process runs, so the operating system may offer a just-released port again; without
   * this memory two ports of one cluster could coincide (a health probe then reached another node's
   * remoting port, which closed the connection without answering).
   */
  public static int freePort() throws IOException {
    while (true) {
      try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        if (HANDED_OUT.add(socket.getLocalPort())) {
          return socket.getLocalPort();
        }
      }
    }
  }

  public String name() {
    return name;
  }

  public int remotePort() {
    return remotePort;
  }

  public Location location() {
    return Location.forGrpcInsecure("127.0.0.1", flightPort);
  }

  /** The node's management endpoint (health routes), e.g. {@code http://127.0.0.1:1234}. */
  public java.net.URI management() {
    return java.net.URI.create("http://127.0.0.1:" + managementPort);
  }

  public Path log() {
    return log;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** SIGTERM: the node runs its coordinated shutdown. */
  public void terminate() {
    process.destroy();
  }

  /** SIGKILL: the node vanishes without a word. */
  public void kill() {
    process.destroyForcibly();
  }

  public boolean awaitExit(long seconds) throws InterruptedException {
    return process.waitFor(seconds, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
