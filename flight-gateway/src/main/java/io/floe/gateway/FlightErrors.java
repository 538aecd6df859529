package io.floe.gateway;

import io.floe.dataset.DatasetStatus;
import io.floe.dataset.Failure;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.InvalidRequestException;
import io.floe.spec.InvalidSpecException;
import io.floe.table.FailureKind;
import io.floe.table.StorageFailure;
import io.grpc.StatusRuntimeException;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.memory.OutOfMemoryException;
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

  public static RuntimeException of(Failure failure) {
    return error(code(failure.kind()), failure.message());
  }

  static ErrorCode code(FailureKind kind) {
    return switch (kind) {
      case INVALID_ARGUMENT -> ErrorCode.INVALID_REQUEST;
      case ALREADY_EXISTS -> ErrorCode.ALREADY_EXISTS;
      case NOT_FOUND -> ErrorCode.TABLE_NOT_FOUND;
      case DATASET_NOT_FOUND -> ErrorCode.DATASET_NOT_FOUND;
      case JOB_NOT_FOUND -> ErrorCode.JOB_NOT_FOUND;
      case LEASE_NOT_FOUND -> ErrorCode.LEASE_NOT_FOUND;
      case RESOURCE_EXHAUSTED -> ErrorCode.MEMORY_EXHAUSTED;
      case STORAGE_ACCESS_DENIED -> ErrorCode.STORAGE_ACCESS_DENIED;
      case LOCATION_NOT_ALLOWED, NOT_OWNER -> ErrorCode.PERMISSION_DENIED;
      case STORAGE_UNAVAILABLE -> ErrorCode.STORAGE_UNAVAILABLE;
      case UNREADABLE_DATA -> ErrorCode.UNREADABLE_DATA;
      case INTERNAL -> ErrorCode.INTERNAL;
    };
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
            code(status.failure().kind()),
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
   * by {@link #error} pass unchanged; the caller's mistakes ({@link InvalidRequestException} and
   * {@link InvalidSpecException}: filters, columns, snapshots) are INVALID_REQUEST; storage and
   * memory failures get their codes; everything else is the node's failure, INTERNAL, and is
   * logged.
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
    if (cause instanceof TimeoutException) {
      return error(
          ErrorCode.CLUSTER_TIMEOUT,
          "The cluster did not answer in time: " + cause.getMessage(),
          cause);
    }
    if (cause instanceof InvalidRequestException || cause instanceof InvalidSpecException) {
      return error(ErrorCode.INVALID_REQUEST, cause.getMessage(), cause);
    }
    if (cause instanceof StorageFailure
        || cause instanceof OutOfMemoryException
        || cause instanceof OutOfMemoryError) {
      return of(Failure.of(cause));
    }
    LOG.warn("Failed handling a request", cause);
    return error(ErrorCode.INTERNAL, Failure.of(cause).message(), cause);
  }
}
