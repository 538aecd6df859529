package io.floe.client;

import io.floe.protocol.ErrorCode;
import java.util.Optional;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;

/**
 * What the client makes of a failed call: the node's {@link ErrorCode} when it sent one, else the
 * transport's status (a connection lost, a node gone). Never the message, which is for people.
 */
final class Failures {
  private Failures() {}

  static Optional<ErrorCode> code(FlightRuntimeException e) {
    return ErrorCode.of(e);
  }

  static boolean is(FlightRuntimeException e, ErrorCode code) {
    return code(e).filter(code::equals).isPresent();
  }

  /**
   * Whether a stream or plan that failed so can succeed when planned again: by the code when there
   * is one; without one, a failure of the transport (unreachable, cut, timed out).
   */
  static boolean retryableRead(FlightRuntimeException e) {
    return code(e).map(ErrorCode::retryable).orElseGet(() -> transportFailure(e, true));
  }

  /**
   * Whether an action that failed so may succeed when sent again: by the code when there is one;
   * without one, a node that could not be reached or did not answer in time.
   */
  static boolean retryableAction(FlightRuntimeException e) {
    return code(e).map(ErrorCode::retryable).orElseGet(() -> transportFailure(e, false));
  }

  private static boolean transportFailure(FlightRuntimeException e, boolean streaming) {
    FlightStatusCode status = e.status().code();
    return switch (status) {
      case UNAVAILABLE, TIMED_OUT, CANCELLED -> true;
      // A stream cut by a dying node ends as INTERNAL or UNKNOWN on the reader's side.
      case INTERNAL, UNKNOWN -> streaming;
      default -> false;
    };
  }
}
