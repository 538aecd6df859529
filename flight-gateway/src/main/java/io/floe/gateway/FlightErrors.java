package io.floe.gateway;

import io.floe.dataset.DatasetStatus;
import io.floe.dataset.Failure;
import io.floe.error.FloeException;
import io.floe.protocol.ErrorCode;
import io.grpc.StatusRuntimeException;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.FlightRuntimeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Floe's errors as the Flight errors clients see: the transport status of their {@link ErrorCode},
 * the code itself in the error details, and a description that names what was wrong.
 */
public final class FlightErrors {
  private static final Logger LOG = LoggerFactory.getLogger(FlightErrors.class);

  private FlightErrors() {}

  /** The error of {@code code} with {@code description}. */
  public static RuntimeException error(ErrorCode code, String description) {
    return error(code, description, null);
  }

  public static RuntimeException error(ErrorCode code, String description, Throwable cause) {
    return code.exception(description, cause);
  }

  /** An entity's refusal, or a failure it keeps, with its kind's code. */
  public static RuntimeException of(Failure failure) {
    return error(ErrorCode.of(failure.kind()), failure.message());
  }

  /**
   * The error for reading a dataset that is not READY, with what may keep it from becoming ready
   * (said only while it is still on its way).
   */
  public static RuntimeException notReady(DatasetStatus status, Optional<String> obstacle) {
    switch (status.state()) {
      case ABSENT:
        return error(
            ErrorCode.DATASET_NOT_FOUND, "No dataset '" + status.name() + "'; load it first");
      case FAILED:
        return error(
            ErrorCode.of(status.failure().kind()),
            "Dataset '" + status.name() + "' failed to load: " + status.failure().message());
      default:
        return error(
            ErrorCode.DATASET_NOT_READY,
            String.format(
                    "Dataset '%s' is not ready: %s, %d of %d slices loaded",
                    status.name(), status.state(), status.slicesLoaded(), status.slicesTotal())
                + obstacle.map(why -> "; " + why).orElse(""));
    }
  }

  /** A ticket for a slice this node does not hold (any more): the reader plans again. */
  public static RuntimeException sliceNotHeld(String sliceId) {
    return error(
        ErrorCode.SLICE_NOT_HELD,
        "Slice '" + sliceId + "' is not held by this node (dropped or moved); plan the read again");
  }

  /**
   * Any exception from handling a request, as the Flight error the client should see. Errors made
   * by {@link #error} pass unchanged; a {@link FloeException} gets its kind's code and message (the
   * kind was chosen where it was thrown); an ask the cluster did not answer in time is
   * CLUSTER_TIMEOUT; anything else is the node's failure, INTERNAL, and is logged with its stack
   * trace.
   */
  public static RuntimeException wrap(Throwable error) {
    Throwable cause = error;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof FlightRuntimeException flight) {
      return flight;
    }
    if (cause instanceof StatusRuntimeException grpc) {
      return grpc;
    }
    if (cause instanceof FloeException floe) {
      return error(ErrorCode.of(floe.kind()), floe.getMessage(), floe);
    }
    if (cause instanceof TimeoutException) {
      // The gateway's own asks (Pekko's AskTimeoutException, a future's get): the cluster's
      // answer, not a failure of the request.
      return error(
          ErrorCode.CLUSTER_TIMEOUT,
          "The cluster did not answer in time: " + cause.getMessage(),
          cause);
    }
    LOG.warn("Failed handling a request", cause);
    return error(ErrorCode.INTERNAL, Failure.of(cause).message(), cause);
  }
}
