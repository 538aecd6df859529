package io.floe.node;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;

/**
 * What the node knows about its own readiness beyond cluster membership: whether its Flight server
 * answers, whether its sharding regions are started, and whether it is shutting down. Kept as an
 * actor-system extension so that Pekko Management's readiness check, which is constructed by
 * reflection, can reach it.
 */
public final class NodeHealth implements Extension {
  private final AtomicBoolean flightServing = new AtomicBoolean();
  private final AtomicBoolean shardingStarted = new AtomicBoolean();
  private final AtomicBoolean leaving = new AtomicBoolean();

  public static final Id ID = new Id();

  /** The extension's id. */
  public static final class Id extends AbstractExtensionId<NodeHealth> {
    @Override
    public NodeHealth createExtension(ExtendedActorSystem system) {
      return new NodeHealth();
    }
  }

  public static NodeHealth get(org.apache.pekko.actor.ActorSystem system) {
    return ID.get(system);
  }

  void flightServing(boolean serving) {
    flightServing.set(serving);
  }

  void shardingStarted() {
    shardingStarted.set(true);
  }

  void leaving() {
    leaving.set(true);
  }

  /** Why the node is not ready, or null when it is. */
  public String notReadyReason() {
    if (leaving.get()) {
      return "node is shutting down";
    }
    if (!shardingStarted.get()) {
      return "sharding is not started";
    }
    if (!flightServing.get()) {
      return "Flight server is not serving";
    }
    return null;
  }
}
