package io.floe.node;

import com.typesafe.config.Config;
import io.floe.auth.AuthSettings;
import io.floe.gateway.GatewaySettings;
import io.floe.resources.NodeResources;
import io.floe.table.CatalogSettings;
import io.floe.table.LocationPolicy;
import io.floe.table.StorageSettings;
import io.floe.ticket.TicketSigner;
import io.floe.tls.ServerTls;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.apache.arrow.flight.Location;

/**
 * A data node's settings, read once from the {@code floe} block of the configuration
 * (application.conf, overridable by environment variables named there).
 *
 * @param flightBindHost the address the Flight server listens on
 * @param flightPort the Flight port; 0 picks a free one
 * @param advertisedHost the host readers are told to connect to; defaults to the bind host
 * @param servingWarmup how long the serving path is exercised after start (0: not at all)
 */
public record FloeSettings(
    String flightBindHost,
    int flightPort,
    int streamBufferBytes,
    String advertisedHost,
    long memoryLimitBytes,
    int admissionQueueLength,
    Duration admissionWaitTimeout,
    long sliceTargetBytes,
    int loadThreads,
    int loadsPerDataset,
    boolean vectorizedLoads,
    boolean nativeLoads,
    java.nio.file.Path loadScratchDir,
    Duration retireLinger,
    Duration askTimeout,
    Duration askAttemptTimeout,
    Duration loadWaitTimeout,
    Duration stallTimeout,
    Duration servingWarmup,
    int gatherAhead,
    StorageSettings storage,
    CatalogSettings catalogs,
    boolean managementEnabled,
    boolean kubernetesDiscovery,
    String ticketSecret,
    Duration ticketTtl,
    AuthSettings auth,
    LocationPolicy locations,
    Optional<ServerTls> tls) {

  public static FloeSettings fromConfig(Config root) {
    return fromConfig(root, System.getenv());
  }

  /**
   * @param env the environment, for {@code FLOE_STORAGE__*} and {@code FLOE_CATALOG__*} properties
   */
  public static FloeSettings fromConfig(Config root, java.util.Map<String, String> env) {
    try {
      return read(root, env);
    } catch (InvalidSettingsException e) {
      throw e;
    } catch (IllegalArgumentException | com.typesafe.config.ConfigException e) {
      throw new InvalidSettingsException(e.getMessage(), e);
    }
  }

  private static FloeSettings read(Config root, java.util.Map<String, String> env) {
    Config floe = root.getConfig("floe");
    String bind = floe.getString("flight.bind-host");
    String advertised = floe.getString("flight.advertised-host").trim();
    int threads = floe.getInt("load.threads");
    return new FloeSettings(
        bind,
        floe.getInt("flight.port"),
        Math.toIntExact(floe.getMemorySize("flight.stream-buffer").toBytes()),
        advertised.isEmpty() ? bind : advertised,
        floe.getMemorySize("memory.limit").toBytes(),
        floe.getInt("memory.admission.queue-length"),
        floe.getDuration("memory.admission.wait-timeout"),
        floe.getMemorySize("load.slice-target-size").toBytes(),
        threads > 0 ? threads : Runtime.getRuntime().availableProcessors(), // 0: one per core
        floe.getInt("load.per-dataset"),
        floe.getBoolean("load.vectorized"),
        floe.getBoolean("load.native"),
        scratchDir(floe.getString("load.scratch-dir")),
        floe.getDuration("load.retire-linger"),
        floe.getDuration("gateway.ask-timeout"),
        floe.getDuration("gateway.ask-attempt-timeout"),
        floe.getDuration("gateway.load-wait-timeout"),
        floe.getDuration("gateway.stall-timeout"),
        floe.getDuration("gateway.warm-up"),
        floe.getInt("gateway.gather-ahead"),
        StorageSettings.fromConfig(floe.getConfig("storage"), env),
        CatalogSettings.fromConfig(floe.getConfig("catalogs"), env),
        floe.getBoolean("management.enabled"),
        discovery(floe.getString("cluster.discovery")),
        floe.getString("security.ticket-secret"),
        floe.getDuration("security.ticket-ttl"),
        auth(root, env),
        LocationPolicy.parse(floe.getString("security.allowed-locations")),
        tls(floe.getConfig("security.tls")));
  }

  /** The configured scratch directory, or the JVM's temporary directory when none is. */
  private static java.nio.file.Path scratchDir(String configured) {
    String dir = configured.isBlank() ? System.getProperty("java.io.tmpdir") : configured.trim();
    return java.nio.file.Path.of(dir);
  }

  /**
   * Tokens and anonymous callers; with {@code kubernetes.enabled}, ServiceAccount tokens reviewed
   * by the API server too.
   */
  private static AuthSettings auth(Config root, java.util.Map<String, String> env) {
    Config auth = root.getConfig("floe.security.auth");
    AuthSettings tokens =
        AuthSettings.of(auth.getString("tokens-file"), auth.getString("anonymous"));
    KubernetesTokenReview.Settings kubernetes =
        KubernetesTokenReview.Settings.from(auth.getConfig("kubernetes"));
    return kubernetes.enabled()
        ? tokens.withReviewer(KubernetesTokenReview.start(root, env, kubernetes))
        : tokens;
  }

  /**
   * TLS on Flight when a certificate is configured; a key without one (or the reverse) is an error.
   */
  private static Optional<ServerTls> tls(Config tls) {
    String cert = tls.getString("cert-file");
    String key = tls.getString("key-file");
    String clientCa = tls.getString("client-ca-file");
    if (cert.isEmpty() && key.isEmpty()) {
      if (!clientCa.isEmpty()) {
        throw new IllegalArgumentException(
            "floe.security.tls.client-ca-file needs cert-file and key-file (TLS) as well");
      }
      return Optional.empty();
    }
    if (cert.isEmpty() || key.isEmpty()) {
      throw new IllegalArgumentException(
          "floe.security.tls needs both cert-file and key-file (FLOE_TLS_CERT_FILE, FLOE_TLS_KEY_FILE)");
    }
    return Optional.of(
        new ServerTls(
            Path.of(cert),
            Path.of(key),
            clientCa.isEmpty() ? Optional.empty() : Optional.of(Path.of(clientCa))));
  }

  private static boolean discovery(String method) {
    switch (method) {
      case "seed-nodes":
        return false;
      case "kubernetes":
        return true;
      default:
        throw new IllegalArgumentException(
            "Invalid floe.cluster.discovery: '" + method + "' (seed-nodes or kubernetes)");
    }
  }

  /** The gateway's settings once the Flight port is known. */
  public GatewaySettings gateway(int boundPort) {
    return new GatewaySettings(
        tls.isPresent()
            ? Location.forGrpcTls(advertisedHost, boundPort)
            : Location.forGrpcInsecure(advertisedHost, boundPort),
        askTimeout,
        askAttemptTimeout,
        loadWaitTimeout,
        gatherAhead,
        tickets());
  }

  /**
   * The ticket signer: from the shared secret, or, with none configured, a random one that only
   * this node knows (fine for a node on its own; a cluster must share a secret).
   */
  private TicketSigner tickets() {
    if (ticketSecret.isBlank()) {
      return TicketSigner.random(ticketTtl);
    }
    return new TicketSigner(
        ticketSecret.getBytes(java.nio.charset.StandardCharsets.UTF_8), ticketTtl);
  }

  public NodeResources.Builder resources() {
    return NodeResources.builder()
        .memoryLimitBytes(memoryLimitBytes)
        .admissionQueueLength(admissionQueueLength)
        .admissionWaitTimeout(admissionWaitTimeout)
        .sliceTargetBytes(sliceTargetBytes)
        .loadThreads(loadThreads)
        .loadsPerDataset(loadsPerDataset)
        .vectorizedLoads(vectorizedLoads)
        .nativeLoads(nativeLoads)
        .loadScratchDir(loadScratchDir)
        .retireLinger(retireLinger)
        .storage(storage)
        .catalogs(catalogs)
        .locations(locations);
  }
}
