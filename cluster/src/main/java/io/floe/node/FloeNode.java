package io.floe.node;

import com.typesafe.config.Config;
import io.floe.auth.BearerAuthenticator;
import io.floe.dataset.DatasetEntity;
import io.floe.dataset.SliceEntity;
import io.floe.gateway.GatewaySettings;
import io.floe.gateway.dataset.DatasetQueries;
import io.floe.gateway.server.FloeFlightServer;
import io.floe.gateway.server.FloeProducer;
import io.floe.gateway.server.StreamMetrics;
import io.floe.resources.NodeResources;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.management.cluster.bootstrap.ClusterBootstrap;
import org.apache.pekko.management.javadsl.PekkoManagement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running data node: the actor system in the cluster, the sharded dataset and slice entities, and
 * the Flight server. Closing it (or the actor system's coordinated shutdown, e.g. on SIGTERM) stops
 * taking Flight calls, lets running streams end, stops the entities (freeing their slices), leaves
 * the cluster, and closes the root allocator, which fails loudly if memory leaked.
 */
public final class FloeNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FloeNode.class);
  private static final Duration STREAM_DRAIN = Duration.ofSeconds(10);

  private final ActorSystem<Void> system;
  private final NodeResources resources;
  private final FloeProducer producer;
  private final ForwardingProducer forwarding = new ForwardingProducer();
  private final NodeMetrics metrics;
  private final FloeFlightServer server;
  private BufferAllocator flightAllocator;
  private boolean flightStopped;
  private final GatewaySettings gateway;
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private volatile io.floe.gateway.job.ServingWarmup warmup;

  private FloeNode(Config config, FloeSettings settings, StartupTimeline timeline)
      throws IOException {
    if (System.getProperty("io.netty.leakDetection.level") == null) {
      // Netty's leak detector records a stack trace for sampled buffers on the serving path
      // (1.5 % of a serving profile); every Arrow byte is accounted by Floe's allocators anyway.
      io.netty.util.ResourceLeakDetector.setLevel(
          io.netty.util.ResourceLeakDetector.Level.DISABLED);
    }
    this.metrics = new NodeMetrics();
    this.resources = settings.resources().loadListener(metrics).build();
    timeline.step("resources");
    this.system = ActorSystem.create(Behaviors.empty(), "floe", config);
    timeline.step("actor system");
    try {
      Cluster cluster = Cluster.get(system);
      org.apache.pekko.cluster.Cluster.get(Adapter.toClassic(system))
          .registerOnMemberUp(
              () -> LOG.info("Cluster member Up {} after its process started", timeline.since()));
      MetricsExtension.get(Adapter.toClassic(system)).install(metrics);
      metrics.bindJobs(io.floe.job.entity.LiveJobs.get(Adapter.toClassic(system)));
      metrics.bindNode(
          org.apache.pekko.cluster.Cluster.get(Adapter.toClassic(system)),
          resources.allocator(),
          () -> resources.sliceStore().size());
      timeline.step("cluster");
      if (settings.managementEnabled()) {
        PekkoManagement.get(Adapter.toClassic(system)).start();
        timeline.step("management");
      }
      if (settings.kubernetesDiscovery()) {
        ClusterBootstrap.get(Adapter.toClassic(system)).start();
        // Missing RBAC otherwise shows only as Pekko's repeated WARN: name what is missing once.
        KubernetesPodAccess.checkAndLog(config);
      } else if (config.getStringList("pekko.cluster.seed-nodes").isEmpty()) {
        cluster.manager().tell(Join.create(cluster.selfMember().address()));
      }
      // Bind Flight first: slices report their holder's location, which needs the bound port
      // (configured as 0 in tests); requests that arrive before the producer is set get
      // UNAVAILABLE from the forwarding producer.
      Location bind = Location.forGrpcInsecure(settings.flightBindHost(), settings.flightPort());

      this.flightAllocator =
          resources.allocator().newChildAllocator("flight-server", 0, Long.MAX_VALUE);
      FloeFlightServer bound =
          FloeFlightServer.start(
              flightAllocator,
              forwarding,
              new FloeFlightServer.Settings(
                  bind,
                  settings.streamBufferBytes(),
                  settings.stallTimeout(),
                  new BearerAuthenticator(settings.auth()),
                  tlsContext(settings),
                  new StreamMetrics(metrics.registry())));
      timeline.step("flight");
      GatewaySettings gatewaySettings = settings.gateway(bound.port());
      resources.advertise(gatewaySettings.advertised().getUri().toString());

      DatasetEntity.init(system, resources.datasetPlanning());
      SliceEntity.init(system, resources.sliceHosting());
      io.floe.job.entity.JobEntity.init(system);
      NodeHealth.get(Adapter.toClassic(system)).shardingStarted();
      timeline.step("sharding");
      this.producer =
          new FloeProducer(
              new DatasetQueries(system, gatewaySettings),
              resources.sliceStore(),
              gatewaySettings,
              resources.allocator(),
              metrics.registry());
      forwarding.delegate(producer);
      NodeHealth.get(Adapter.toClassic(system)).flightServing(true);
      timeline.step("producer");
      this.server = bound;
      this.gateway = gatewaySettings;
    } catch (IOException | RuntimeException e) {
      system.terminate();
      awaitTermination();
      if (flightAllocator != null) {
        flightAllocator.close();
      }
      resources.close();
      metrics.close();
      throw e;
    }
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseBeforeServiceUnbind(),
            "floe-not-ready",
            () -> {
              NodeHealth.get(Adapter.toClassic(system)).leaving();
              forwarding.leaving();
              return CompletableFuture.completedFuture(Done.getInstance());
            });
    // Flight keeps serving through hand-off: the slices this node held keep answering readers
    // until their new holders have loaded (see SliceEntity), then the server stops and lets
    // running streams finish.
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
            "floe-flight-stop",
            () ->
                CompletableFuture.supplyAsync(
                    () -> {
                      resources.awaitRetired(
                          io.floe.resources.Retirement.SHUTDOWN_LINGER_MAX.plusSeconds(5));
                      stopFlight();
                      return Done.getInstance();
                    }));
    system
        .getWhenTerminated()
        .thenRun(
            () -> {
              try {
                stopFlight();
                if (warmup != null) {
                  warmup.stop(); // gives its memory back before the allocators close
                }
                resources.close();
                metrics.close();
                closed.complete(null);
              } catch (RuntimeException e) {
                LOG.error("Node did not shut down cleanly", e);
                closed.completeExceptionally(e);
              }
            });
    LOG.info(
        "Floe node up: Flight at {}, memory limit {} bytes; serving {}",
        gateway.advertised().getUri(),
        settings.memoryLimitBytes(),
        timeline.summary());
    if (!settings.servingWarmup().isZero()) {
      warmup =
          io.floe.gateway.job.ServingWarmup.start(resources.allocator(), settings.servingWarmup());
    }
  }

  public static FloeNode start(Config config) {
    return start(config, StartupTimeline.begin());
  }

  /** Starts a node, timing its steps on {@code timeline} (begun when the process's main ran). */
  static FloeNode start(Config config, StartupTimeline timeline) {
    try {
      Config withState = DurableState.apply(config);
      FloeSettings settings = FloeSettings.fromConfig(withState);
      timeline.step("settings");
      return new FloeNode(withState, settings, timeline);
    } catch (IOException e) {
      throw new UncheckedIOException("Flight server failed to start", e);
    }
  }

  private synchronized void stopFlight() {
    if (flightStopped) {
      return;
    }
    flightStopped = true;
    NodeHealth.get(Adapter.toClassic(system)).flightServing(false);
    server.shutdown();
    try {
      if (!server.awaitTermination(STREAM_DRAIN.toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warn("Flight streams still running after {}; closing them", STREAM_DRAIN);
      }
      server.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    flightAllocator.close();
  }

  /** Where readers reach this node. */
  public Location location() {
    return gateway.advertised();
  }

  public ActorSystem<Void> system() {
    return system;
  }

  public NodeResources resources() {
    return resources;
  }

  /** Completes once the node has shut down and freed its memory. */
  public CompletableFuture<Void> whenClosed() {
    return closed;
  }

  @Override
  public void close() {
    CoordinatedShutdown.get(system).runAll(CoordinatedShutdown.unknownReason());
    awaitTermination();
    closed.join();
  }

  private void awaitTermination() {
    try {
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("Actor system did not terminate in 60 s", e);
    }
  }

  private static java.util.Optional<io.netty.handler.ssl.SslContext> tlsContext(
      FloeSettings settings) throws IOException {
    if (settings.tls().isEmpty()) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(settings.tls().get().sslContext());
  }
}
