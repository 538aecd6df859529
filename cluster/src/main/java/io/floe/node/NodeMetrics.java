package io.floe.node;

import io.floe.gateway.server.LatencyBuckets;
import io.floe.iceberg.SliceLoadListener;
import io.floe.job.JobCounters;
import io.floe.job.entity.LiveJobs;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.MemberStatus;

/**
 * A node's meters, in the Prometheus registry that the management port's {@code /metrics} serves
 * (MetricsRoute): the JVM's (memory, GC, threads, classes, CPU, uptime), the node's Arrow memory
 * and slices, its slice loads, and what the gateway registers. Every meter has a description
 * (promtool refuses one without); no label names a slice or ticket.
 */
public final class NodeMetrics implements SliceLoadListener, AutoCloseable {
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final JvmGcMetrics gc = new JvmGcMetrics();

  public NodeMetrics() {
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
    // After the filters: a meter registered before them would escape them.
    this.loads = loadMeters();
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** The node's Arrow memory, slices and view of its cluster, read when scraped. */
  void bindNode(Cluster cluster, BufferAllocator root, IntSupplier slicesHeld) {
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
    Gauge.builder(
            "floe.cluster.members.up",
            cluster,
            c ->
                java.util.stream.StreamSupport.stream(c.state().getMembers().spliterator(), false)
                    .filter(m -> m.status() == MemberStatus.up())
                    .count())
        .description("Cluster members this node sees Up")
        .register(registry);
  }

  /** One cause's load meters, registered once (loadMeters). */
  private record LoadMeters(Timer loaded, Timer failed, Counter rows, Counter bytes) {}

  private final Map<Cause, LoadMeters> loads;

  private Map<Cause, LoadMeters> loadMeters() {
    java.util.EnumMap<Cause, LoadMeters> meters = new java.util.EnumMap<>(Cause.class);
    for (Cause cause : Cause.values()) {
      meters.put(
          cause,
          new LoadMeters(
              loadTimer(cause, "loaded"),
              loadTimer(cause, "failed"),
              Counter.builder("floe.slice.loaded.rows")
                  .tag("cause", tag(cause))
                  .description("Rows of the slices this node loaded, by why it loaded them")
                  .register(registry),
              Counter.builder("floe.slice.loaded.bytes")
                  .tag("cause", tag(cause))
                  .baseUnit("bytes")
                  .description("Arrow bytes of the slices this node loaded, by why it loaded them")
                  .register(registry)));
    }
    return java.util.Collections.unmodifiableMap(meters);
  }

  @Override
  public void loaded(Cause cause, long rows, long bytes, Duration took) {
    LoadMeters meters = loads.get(cause);
    meters.loaded().record(took);
    meters.rows().increment(rows);
    meters.bytes().increment(bytes);
  }

  @Override
  public void failed(Cause cause, Duration took) {
    loads.get(cause).failed().record(took);
  }

  private Timer loadTimer(Cause cause, String outcome) {
    return Timer.builder("floe.slice.load")
        .tag("cause", tag(cause))
        .tag("outcome", outcome)
        .description(
            "Slice loads on this node and how long each took: requested by its dataset (first"
                + " load, refresh) or moved here (a node joined, left or died; a rebalance)")
        .serviceLevelObjectives(LatencyBuckets.bounds())
        .register(registry);
  }

  private static String tag(Cause cause) {
    return cause.name().toLowerCase(Locale.ROOT);
  }

  /** The job entities running here, whose counters each scrape reports (bindJobs). */
  private volatile LiveJobs jobs;

  private final Map<String, List<Meter>> jobMeters = new HashMap<>();

  /** Reports the counters of the job entities running on this node, labelled by job. */
  void bindJobs(LiveJobs liveJobs) {
    this.jobs = liveJobs;
  }

  /** Registers meters for jobs that started here and removes those of jobs that left. */
  private synchronized void refreshJobs() {
    LiveJobs live = jobs;
    if (live == null) {
      return;
    }
    Map<String, Supplier<JobCounters>> running = live.running();
    jobMeters
        .entrySet()
        .removeIf(
            entry -> {
              if (running.containsKey(entry.getKey())) {
                return false;
              }
              entry.getValue().forEach(registry::remove);
              return true;
            });
    running.forEach(
        (job, counters) ->
            jobMeters.computeIfAbsent(
                job,
                id ->
                    List.of(
                        jobCounter(
                            id,
                            counters,
                            "floe.job.rows.leased",
                            "Rows of dynamic-mode batches leased to workers",
                            JobCounters::rowsLeased),
                        jobCounter(
                            id,
                            counters,
                            "floe.job.rows.acknowledged",
                            "Rows of dynamic-mode batches acknowledged by workers",
                            JobCounters::rowsAcknowledged),
                        jobCounter(
                            id,
                            counters,
                            "floe.job.rows.reissued",
                            "Rows of dynamic-mode batches leased again after a lease timed out",
                            JobCounters::rowsReissued))));
  }

  private Meter jobCounter(
      String job,
      Supplier<JobCounters> counters,
      String name,
      String description,
      java.util.function.ToLongFunction<JobCounters> value) {
    return FunctionCounter.builder(name, counters, c -> value.applyAsLong(c.get()))
        .tag("job", job)
        .description(description + ", by the node that holds the job's entity")
        .register(registry);
  }

  /** The exposition, in Prometheus' text format. */
  public String scrape() {
    refreshJobs();
    return registry.scrape();
  }

  @Override
  public void close() {
    gc.close();
    registry.close();
  }
}
