package io.floe.gateway;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Set;

/**
 * How long a node takes to plan reads and answer actions, as histograms. Labels are bounded: the
 * plan's kind, the action's name (unknown names all count as "unknown") and whether the call was
 * answered or refused.
 */
final class CallMetrics {
  private final MeterRegistry registry;
  private final Set<String> actions;

  CallMetrics(MeterRegistry registry, Set<String> actions) {
    this.registry = registry;
    this.actions = Set.copyOf(actions);
  }

  Timer.Sample start() {
    return Timer.start(registry);
  }

  /** A plan ended: {@code kind} shard or job (path descriptors plan shards). */
  void planned(Timer.Sample sample, String kind, boolean answered) {
    sample.stop(
        Timer.builder("floe.plan")
            .tag("kind", kind)
            .tag("outcome", answered ? "answered" : "refused")
            .description("GetFlightInfo calls planned by this node and how long each took")
            .publishPercentileHistogram()
            .register(registry));
  }

  void acted(Timer.Sample sample, String action, boolean answered) {
    sample.stop(
        Timer.builder("floe.action")
            .tag("action", actions.contains(action) ? action : "unknown")
            .tag("outcome", answered ? "answered" : "refused")
            .description(
                "Actions answered by this node and how long each took (a load with wait lasts"
                    + " until READY)")
            .publishPercentileHistogram()
            .register(registry));
  }
}
