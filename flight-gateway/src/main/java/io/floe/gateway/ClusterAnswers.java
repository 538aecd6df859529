package io.floe.gateway;

import io.floe.dataset.DatasetStatus;
import io.floe.protocol.ErrorCode;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;

/**
 * How the gateway waits for the cluster's entities and reports what they could not do: a bounded
 * wait, a dataset that is not ready (with what keeps the cluster from placing it, if anything), and
 * any failure as the Flight error the client sees.
 */
public final class ClusterAnswers {
  private final GatewaySettings settings;
  private final ShardingQuorum quorum;

  public ClusterAnswers(GatewaySettings settings, ShardingQuorum quorum) {
    this.settings = settings;
    this.quorum = quorum;
  }

  /** The answer, waited for a little longer than the entities' own ask timeout. */
  public <T> T await(CompletionStage<T> stage) {
    try {
      return stage
          .toCompletableFuture()
          .get(settings.askTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw FlightErrors.error(ErrorCode.CANCELLED, "Interrupted");
    } catch (Exception e) {
      throw FlightErrors.wrap(e);
    }
  }

  public RuntimeException notReady(DatasetStatus status) {
    return FlightErrors.notReady(status, quorum.shortfall());
  }

  /**
   * Any failure as the Flight error the client sees. A cluster that did not answer in time may be
   * one whose sharding cannot place the entity asked: say so when that is possible.
   */
  public RuntimeException failure(Throwable error) {
    RuntimeException wrapped = FlightErrors.wrap(error);
    if (!(wrapped instanceof FlightRuntimeException flight)
        || flight.status().code() != FlightStatusCode.TIMED_OUT) {
      return wrapped;
    }
    return quorum
        .shortfall()
        .<RuntimeException>map(
            why ->
                FlightErrors.error(
                    ErrorCode.of(flight).orElse(ErrorCode.CLUSTER_TIMEOUT),
                    flight.status().description() + "; " + why,
                    flight.getCause()))
        .orElse(wrapped);
  }
}
