package io.floe.gateway.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * How long a node takes to plan reads and answer actions, as histograms. Labels are bounded: the
 * plan's kind, the action's name (unknown names all count as "unknown") and whether the call was
 * answered or refused. Every timer is registered once here; a call only looks its timer up.
 */
final class CallMetrics {
  private static final String UNKNOWN = "unknown";

  private final MeterRegistry registry;
  private final Map<String, Outcomes> plans = new HashMap<>();
  private final Map<String, Outcomes> actions = new HashMap<>();

  /** A call's timers, answered and refused. */
  private record Outcomes(Timer answered, Timer refused) {
    Timer of(boolean answer) {
      return answer ? answered : refused;
    }
  }

  CallMetrics(MeterRegistry registry, Set<String> actionNames) {
    this.registry = registry;
    for (String kind : new String[] {"shard", "job"}) {
      plans.put(
          kind,
          outcomes(
              "floe.plan",
              "kind",
              kind,
              "GetFlightInfo calls planned by this node and how long each took"));
    }
    for (String action : actionNames) {
      actions.put(action, actionOutcomes(action));
    }
    actions.put(UNKNOWN, actionOutcomes(UNKNOWN));
  }

  private Outcomes actionOutcomes(String action) {
    return outcomes(
        "floe.action",
        "action",
        action,
        "Actions answered by this node and how long each took (a load with wait lasts until"
            + " READY)");
  }

  private Outcomes outcomes(String name, String tag, String value, String description) {
    return new Outcomes(
        timer(name, tag, value, "answered", description),
        timer(name, tag, value, "refused", description));
  }

  private Timer timer(String name, String tag, String value, String outcome, String description) {
    return Timer.builder(name)
        .tag(tag, value)
        .tag("outcome", outcome)
        .description(description)
        .serviceLevelObjectives(LatencyBuckets.bounds())
        .register(registry);
  }

  Timer.Sample start() {
    return Timer.start(registry);
  }

  /** A plan ended: {@code kind} shard or job (path descriptors plan shards). */
  void planned(Timer.Sample sample, String kind, boolean answered) {
    sample.stop(plans.get(kind).of(answered));
  }

  void acted(Timer.Sample sample, String action, boolean answered) {
    sample.stop(actions.getOrDefault(action, actions.get(UNKNOWN)).of(answered));
  }
}
