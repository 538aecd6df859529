package io.floe.gateway;

import io.floe.dataset.DatasetStatus;
import io.floe.dataset.Failure;
import io.floe.dataset.FailureKind;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;

/** Turns Floe's failures into Flight statuses whose descriptions name what was wrong. */
public final class FlightErrors {
  private FlightErrors() {}

  public static FlightRuntimeException of(Failure failure) {
    return status(failure.kind()).withDescription(failure.message()).toRuntimeException();
  }

  static CallStatus status(FailureKind kind) {
    switch (kind) {
      case INVALID_ARGUMENT:
        return CallStatus.INVALID_ARGUMENT;
      case ALREADY_EXISTS:
        return CallStatus.ALREADY_EXISTS;
      case NOT_FOUND:
        return CallStatus.NOT_FOUND;
      case RESOURCE_EXHAUSTED:
        return CallStatus.RESOURCE_EXHAUSTED;
      case STORAGE_ACCESS_DENIED:
        return CallStatus.UNAUTHORIZED;
      case STORAGE_UNAVAILABLE:
        return CallStatus.UNAVAILABLE;
      case UNREADABLE_DATA:
        // The named table holds a file that cannot be decoded: retrying will not help.
        return CallStatus.INVALID_ARGUMENT;
      default:
        return CallStatus.INTERNAL;
    }
  }

  /**
   * The error for reading a dataset that is not READY, with what may keep it from becoming ready
   * (said only while it is still on its way).
   */
  public static RuntimeException notReady(DatasetStatus status, Optional<String> obstacle) {
    switch (status.state()) {
      case ABSENT:
        return CallStatus.NOT_FOUND
            .withDescription("No dataset '" + status.name() + "'; load it first")
            .toRuntimeException();
      case FAILED:
        return of(
            new Failure(
                status.failure().kind(),
                "Dataset '" + status.name() + "' failed to load: " + status.failure().message()));
      default:
        return FailedPrecondition.of(
            String.format(
                    "Dataset '%s' is not ready: %s, %d of %d slices loaded",
                    status.name(), status.state(), status.slicesLoaded(), status.slicesTotal())
                + obstacle.map(why -> "; " + why).orElse(""));
    }
  }

  /** Any exception from handling a request, as the Flight error the client should see. */
  public static RuntimeException wrap(Throwable error) {
    Throwable cause = error;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof FlightRuntimeException) {
      return (FlightRuntimeException) cause;
    }
    if (cause instanceof io.grpc.StatusRuntimeException) {
      return (io.grpc.StatusRuntimeException) cause;
    }
    if (cause instanceof TimeoutException) {
      return CallStatus.TIMED_OUT
          .withDescription("The cluster did not answer in time: " + cause.getMessage())
          .toRuntimeException();
    }
    return of(Failure.of(cause));
  }
}
