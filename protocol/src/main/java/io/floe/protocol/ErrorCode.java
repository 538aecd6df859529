package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.util.Excerpt;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.util.Optional;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.ErrorFlightMetadata;
import org.apache.arrow.flight.FlightRuntimeException;

/**
 * What went wrong, as clients act on it. Every error a node sends carries one of these in the
 * Flight error details (gRPC's {@code grpc-status-details-bin} trailer, which pyarrow shows as
 * {@code FlightError.extra_info}) as {@code {"code": "DATASET_NOT_READY"}}, chosen where the error
 * is raised; clients decide what to do from the code alone, never from the message, which is for
 * people and may be reworded. The transport status goes with it for clients that know no codes.
 *
 * <p>A failure found below the gateway carries an {@link ErrorKind} ({@link FloeException}); {@link
 * #of(ErrorKind)} is its code on the wire. The other codes belong to the gateway itself (tickets,
 * readiness, a node's life, streams).
 *
 * <p>{@link #retryable()}: whether trying again (after planning again, with a back-off) can succeed
 * without the caller changing anything. The transport's own failures (connection lost, node gone)
 * carry no code; clients treat those as retryable by their status.
 */
public enum ErrorCode {
  /** The request is malformed or names something invalid: a value, a column, a filter. */
  INVALID_REQUEST(Status.INVALID_ARGUMENT, false),
  /** No bearer token, or one the node does not know, where the node requires one. */
  UNAUTHENTICATED(Status.UNAUTHENTICATED, false),
  /** The caller's role may not do this (the message names the role needed). */
  PERMISSION_DENIED(Status.UNAUTHORIZED, false),
  /** A ticket that was not signed by this cluster, was altered or has expired. */
  TICKET_INVALID(Status.UNAUTHENTICATED, false),
  /**
   * A valid ticket presented by a caller other than the one that planned it: tickets are bound to
   * their caller when the node authenticates callers. Plan the read with your own token.
   */
  TICKET_WRONG_CALLER(Status.UNAUTHORIZED, false),
  /** No dataset of that name (never loaded, dropped, or it was a typo). */
  DATASET_NOT_FOUND(Status.NOT_FOUND, false),
  /** The dataset exists but is planning, loading or recovering: retry later, unchanged. */
  DATASET_NOT_READY(Status.FAILED_PRECONDITION, true),
  /** A dataset or job of that name exists with other settings. */
  ALREADY_EXISTS(Status.ALREADY_EXISTS, false),
  /** The node no longer holds the ticket's slice (moved or dropped): plan the read again. */
  SLICE_NOT_HELD(Status.NOT_FOUND, true),
  /** A job's dataset was loaded again differently since the job (or its epoch) began. */
  LAYOUT_CHANGED(Status.FAILED_PRECONDITION, false),
  /** No job of that id, or its entity was lost with its node: register it again, then go on. */
  JOB_NOT_FOUND(Status.NOT_FOUND, false),
  /** A dynamic-mode lease the job does not know. */
  LEASE_NOT_FOUND(Status.NOT_FOUND, false),
  /** The table, a metadata file or a data file it names is not there. */
  TABLE_NOT_FOUND(Status.NOT_FOUND, false),
  /** The object store or catalog refused the node's credentials. */
  STORAGE_ACCESS_DENIED(Status.UNAUTHORIZED, false),
  /** The object store or catalog could not be reached or failed; it may answer later. */
  STORAGE_UNAVAILABLE(Status.UNAVAILABLE, true),
  /** A file of the table exists but cannot be decoded. */
  UNREADABLE_DATA(Status.INVALID_ARGUMENT, false),
  /** The node's memory limit cannot hold what was asked. */
  MEMORY_EXHAUSTED(Status.RESOURCE_EXHAUSTED, false),
  /** The node is starting and does not serve yet. */
  NODE_STARTING(Status.UNAVAILABLE, true),
  /** The node is leaving its cluster: it still streams what it holds but plans and acts no more. */
  NODE_LEAVING(Status.UNAVAILABLE, true),
  /** The cluster did not answer in time (an entity moving, a node leaving). */
  CLUSTER_TIMEOUT(Status.TIMED_OUT, true),
  /** A stream's reader took nothing for longer than the node waits. */
  STREAM_STALLED(Status.TIMED_OUT, true),
  /** The call was cancelled or interrupted on the node. */
  CANCELLED(Status.CANCELLED, true),
  /** A Flight method Floe does not offer (DoPut, DoExchange): datasets come from tables. */
  UNIMPLEMENTED(Status.UNIMPLEMENTED, false),
  /** A failure inside the node. Possibly passing (a node failing mid-call); logged on the node. */
  INTERNAL(Status.INTERNAL, true);

  /**
   * The transport status an error of a code is sent with. Flight's codes, plus gRPC's
   * FAILED_PRECONDITION, which Flight lacks.
   */
  public enum Status {
    INVALID_ARGUMENT,
    UNAUTHENTICATED,
    UNAUTHORIZED,
    NOT_FOUND,
    ALREADY_EXISTS,
    FAILED_PRECONDITION,
    RESOURCE_EXHAUSTED,
    UNAVAILABLE,
    TIMED_OUT,
    CANCELLED,
    UNIMPLEMENTED,
    INTERNAL
  }

  /** The gRPC trailer that carries the details (Flight's error "extra info"). */
  public static final String DETAILS_KEY = "grpc-status-details-bin";

  /** Arrow C++'s trailer naming the Arrow status code of an error. */
  private static final String ARROW_STATUS_KEY = "x-arrow-status";

  private static final Metadata.Key<byte[]> DETAILS =
      Metadata.Key.of(DETAILS_KEY, Metadata.BINARY_BYTE_MARSHALLER);

  private static final Metadata.Key<String> ARROW_STATUS =
      Metadata.Key.of(ARROW_STATUS_KEY, Metadata.ASCII_STRING_MARSHALLER);

  private final Status status;
  private final boolean retryable;

  ErrorCode(Status status, boolean retryable) {
    this.status = status;
    this.retryable = retryable;
  }

  public Status status() {
    return status;
  }

  public boolean retryable() {
    return retryable;
  }

  /**
   * The exception that sends this code with {@code description} (and logs {@code cause} on the
   * node, never sending it): a Flight error of the code's status, or for FAILED_PRECONDITION, which
   * Flight's codes lack, a gRPC status, which Flight passes through to the wire unchanged.
   */
  public RuntimeException exception(String description, Throwable cause) {
    // Bounded here too, whatever built it: it travels in a header, which clients bound.
    description = Excerpt.description(description);
    if (status == Status.FAILED_PRECONDITION) {
      Metadata trailers = new Metadata();
      trailers.put(DETAILS, details());
      trailers.put(ARROW_STATUS, arrowStatusCode());
      return io.grpc.Status.FAILED_PRECONDITION
          .withDescription(description)
          .withCause(cause)
          .asRuntimeException(trailers);
    }
    ErrorFlightMetadata metadata = new ErrorFlightMetadata();
    metadata.insert(DETAILS_KEY, details());
    metadata.insert(ARROW_STATUS_KEY, arrowStatusCode());
    return callStatus()
        .withDescription(description)
        .withCause(cause)
        .withMetadata(metadata)
        .toRuntimeException();
  }

  /**
   * The Arrow C++ status code of the status pyarrow makes of this transport status. Sent with the
   * details, it makes Arrow's C++ client (pyarrow) keep them: pyarrow then raises a FlightError
   * carrying them as {@code extra_info} (a FlightInternalError where it would otherwise raise
   * ArrowInvalid, ArrowKeyError or ArrowException; the message is unchanged).
   */
  private String arrowStatusCode() {
    return switch (status) {
      case NOT_FOUND -> "2"; // KeyError
      case INVALID_ARGUMENT, FAILED_PRECONDITION, RESOURCE_EXHAUSTED -> "4"; // Invalid
      case CANCELLED -> "8"; // Cancelled
      case ALREADY_EXISTS -> "45"; // AlreadyExists
      default -> "5"; // IOError
    };
  }

  private CallStatus callStatus() {
    return switch (status) {
      case INVALID_ARGUMENT -> CallStatus.INVALID_ARGUMENT;
      case UNAUTHENTICATED -> CallStatus.UNAUTHENTICATED;
      case UNAUTHORIZED -> CallStatus.UNAUTHORIZED;
      case NOT_FOUND -> CallStatus.NOT_FOUND;
      case ALREADY_EXISTS -> CallStatus.ALREADY_EXISTS;
      case RESOURCE_EXHAUSTED -> CallStatus.RESOURCE_EXHAUSTED;
      case UNAVAILABLE -> CallStatus.UNAVAILABLE;
      case TIMED_OUT -> CallStatus.TIMED_OUT;
      case CANCELLED -> CallStatus.CANCELLED;
      case UNIMPLEMENTED -> CallStatus.UNIMPLEMENTED;
      case INTERNAL, FAILED_PRECONDITION -> CallStatus.INTERNAL;
    };
  }

  /** The code a failure of {@code kind} is sent with; of the same {@link #retryable()}. */
  public static ErrorCode of(ErrorKind kind) {
    return switch (kind) {
      case INVALID_ARGUMENT -> INVALID_REQUEST;
      case ALREADY_EXISTS -> ALREADY_EXISTS;
      case NOT_FOUND -> TABLE_NOT_FOUND;
      case DATASET_NOT_FOUND -> DATASET_NOT_FOUND;
      case JOB_NOT_FOUND -> JOB_NOT_FOUND;
      case LEASE_NOT_FOUND -> LEASE_NOT_FOUND;
      case LOCATION_NOT_ALLOWED, NOT_OWNER -> PERMISSION_DENIED;
      case STORAGE_ACCESS_DENIED -> STORAGE_ACCESS_DENIED;
      case STORAGE_UNAVAILABLE -> STORAGE_UNAVAILABLE;
      case UNREADABLE_DATA -> UNREADABLE_DATA;
      case RESOURCE_EXHAUSTED -> MEMORY_EXHAUSTED;
      case INTERNAL -> INTERNAL;
    };
  }

  /**
   * The code an error received or raised carries; empty for any other error (a transport failure,
   * another server's error).
   */
  public static Optional<ErrorCode> of(Throwable error) {
    if (error instanceof FlightRuntimeException flight
        && flight.status().metadata() != null
        && flight.status().metadata().containsKey(DETAILS_KEY)) {
      // A transport failure's metadata has other keys, or none.
      return fromDetails(flight.status().metadata().getByte(DETAILS_KEY));
    }
    if (error instanceof StatusRuntimeException grpc && grpc.getTrailers() != null) {
      return fromDetails(grpc.getTrailers().get(DETAILS));
    }
    return Optional.empty();
  }

  /** The error details that carry this code. */
  public byte[] details() {
    ObjectNode node = Json.object();
    node.put("code", name());
    return Json.bytes(node);
  }

  /**
   * The code in error details as a node sends them; empty for details of another shape (another
   * server's) or an unknown code (a newer node's), which the caller then treats by its status.
   */
  public static Optional<ErrorCode> fromDetails(byte[] details) {
    if (details == null || details.length == 0 || details[0] != '{') {
      return Optional.empty();
    }
    try {
      JsonNode code = Json.mapper().readTree(details).path("code");
      if (!code.isTextual()) {
        return Optional.empty();
      }
      for (ErrorCode known : values()) {
        if (known.name().equals(code.asText())) {
          return Optional.of(known);
        }
      }
      return Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
