package io.floe.gateway;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.japi.function.Function;

/**
 * Asks a sharded entity, and asks again when an attempt goes unanswered, until the whole timeout is
 * spent. An ask sent to an entity whose node just died is lost; only one sent after sharding has
 * placed the entity on a live node is answered, so one long ask would keep the caller waiting its
 * full timeout even when the entity was back within seconds. Only for questions an entity may be
 * asked twice without harm (reads, registrations of the same spec, leases, acknowledgements).
 */
public final class RepeatedAsk {
  private RepeatedAsk() {}

  /**
   * @param attempt how long one ask waits for its answer
   * @param total how long all attempts together may take; the last attempt's failure is the answer
   *     then
   */
  public static <M, R> CompletionStage<R> ask(
      EntityRef<M> entity, Function<ActorRef<R>, M> message, Duration attempt, Duration total) {
    return attempt(entity, message, attempt, System.nanoTime() + total.toNanos());
  }

  private static <M, R> CompletionStage<R> attempt(
      EntityRef<M> entity, Function<ActorRef<R>, M> message, Duration attempt, long deadline) {
    long left = deadline - System.nanoTime();
    Duration wait = Duration.ofNanos(Math.max(1, Math.min(left, attempt.toNanos())));
    return entity
        .ask(message, wait)
        .handle(
            (reply, failure) -> {
              if (failure == null) {
                return CompletableFuture.completedFuture(reply);
              }
              Throwable cause =
                  failure instanceof CompletionException && failure.getCause() != null
                      ? failure.getCause()
                      : failure;
              if (cause instanceof TimeoutException && deadline - System.nanoTime() > 0) {
                return attempt(entity, message, attempt, deadline);
              }
              return CompletableFuture.<R>failedFuture(cause);
            })
        .thenCompose(next -> next);
  }
}
