package io.floe.node;

import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;

/**
 * Where the management route finds its node's meters: the node makes them before its actor system
 * (slice loads report to them) and installs them here before management starts.
 */
final class MetricsExtension implements Extension {
  static final Id ID = new Id();

  private volatile NodeMetrics metrics;

  static final class Id extends AbstractExtensionId<MetricsExtension> {
    @Override
    public MetricsExtension createExtension(ExtendedActorSystem system) {
      return new MetricsExtension();
    }
  }

  static MetricsExtension get(org.apache.pekko.actor.ActorSystem system) {
    return ID.get(system);
  }

  void install(NodeMetrics nodeMetrics) {
    this.metrics = nodeMetrics;
  }

  /** The node's meters; null before the node installed them. */
  NodeMetrics metrics() {
    return metrics;
  }
}
