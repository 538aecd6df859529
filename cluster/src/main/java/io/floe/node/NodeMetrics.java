package io.floe.node;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.apache.pekko.cluster.Cluster;

/**
 * A node's meters, in one Prometheus registry that the management port's {@code /metrics} serves
 * (MetricsRoute): the JVM's (memory, GC, threads, classes, CPU, uptime), the node's Arrow memory,
 * and whatever the gateway registers. Every meter has a description (promtool insists).
 */
public final class NodeMetrics implements Extension {
  public static final Id ID = new Id();

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics gc = new JvmGcMetrics();

  /** The extension's id. */
  public static final class Id extends AbstractExtensionId<NodeMetrics> {
    @Override
    public NodeMetrics createExtension(ExtendedActorSystem system) {
      return new NodeMetrics(system);
    }
  }

  public static NodeMetrics get(org.apache.pekko.actor.ActorSystem system) {
    return ID.get(system);
  }

  private NodeMetrics(ExtendedActorSystem system) {
    // Two of Micrometer's processor meters break Prometheus' naming rules (promtool refuses them):
    // CPU time in nanoseconds (process_cpu_usage says the same) and a gauge named *_count.
    registry
        .config()
        .meterFilter(MeterFilter.deny(id -> id.getName().equals("process.cpu.time")))
        .meterFilter(
            new MeterFilter() {
              @Override
              public Meter.Id map(Meter.Id id) {
                return id.getName().equals("system.cpu.count")
                    ? id.withName("system.cpu.available")
                    : id;
              }
            });
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    Gauge.builder(
            "floe.cluster.members.up",
            Cluster.get(system),
            cluster ->
                java.util.stream.StreamSupport.stream(
                        cluster.state().getMembers().spliterator(), false)
                    .filter(m -> m.status() == org.apache.pekko.cluster.MemberStatus.up())
                    .count())
        .description("Cluster members this node sees Up")
        .register(registry);
    system.registerOnTermination(gc::close);
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The node's Arrow memory and slices, read when scraped. */
  void bindMemory(BufferAllocator root, java.util.function.IntSupplier slicesHeld) {
    Gauge.builder("floe.arrow.allocated", root, BufferAllocator::getAllocatedMemory)
        .baseUnit("bytes")
        .description("Off-heap Arrow memory held: slices, loads in progress and open streams")
        .register(registry);
    Gauge.builder("floe.arrow.limit", root, BufferAllocator::getLimit)
        .baseUnit("bytes")
        .description("The most Arrow memory this node may hold (floe.memory.limit)")
        .register(registry);
    Gauge.builder("floe.slices.held", slicesHeld, s -> s.getAsInt())
        .description("Slices loaded and held on this node")
        .strongReference(true) // the supplier lives nowhere else
        .register(registry);
  }

  /** The exposition, in Prometheus' text format. */
  public String scrape() {
    return registry.scrape();
  }
}
