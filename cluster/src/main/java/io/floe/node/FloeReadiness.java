package io.floe.node;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ActorSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pekko Management readiness check ({@code /ready}): true only when the node's sharding is up, its
 * Flight server serves, and it is not leaving. Cluster membership (Up) is checked by Pekko
 * Management's own cluster check beside it.
 */
public final class FloeReadiness implements Supplier<CompletionStage<Boolean>> {
  private static final Logger LOG = LoggerFactory.getLogger(FloeReadiness.class);
  private final NodeHealth health;

  public FloeReadiness(ActorSystem system) {
    this.health = NodeHealth.get(system);
  }

  @Override
  public CompletionStage<Boolean> get() {
    String reason = health.notReadyReason();
    if (reason != null) {
      LOG.debug("Not ready: {}", reason);
    }
    return CompletableFuture.completedFuture(reason == null);
  }
}
