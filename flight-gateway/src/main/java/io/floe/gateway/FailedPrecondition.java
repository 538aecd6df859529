package io.floe.gateway;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;

/**
 * Flight's status codes have no FAILED_PRECONDITION, but gRPC, which carries Flight, does, and it
 * is the honest answer to "this dataset exists but is still loading": retry later, unchanged. The
 * gateway raises it as a gRPC status, which Flight passes through to the wire unchanged.
 */
final class FailedPrecondition {
  private FailedPrecondition() {}

  static StatusRuntimeException of(String description) {
    return Status.FAILED_PRECONDITION.withDescription(description).asRuntimeException();
  }
}
