package io.floe.gateway;

import java.time.Duration;
import org.apache.arrow.flight.BackpressureStrategy;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;

/**
 * Holds a stream back until its reader's transport is ready for the next batch, so that a slow
 * reader slows the stream instead of filling the node's memory, and ends it with TIMED_OUT when the
 * reader takes nothing for the stall timeout.
 */
final class ReaderPacing {
  /**
   * gRPC delivers the transport's "ready again" callback late or not at all while the producer
   * thread is blocked (seen here with Flight Java 19), so the wait re-checks readiness this often
   * instead of trusting the callback alone.
   */
  private static final long READY_POLL_MILLIS = 1;

  private final Duration stallTimeout;

  ReaderPacing(Duration stallTimeout) {
    this.stallTimeout = stallTimeout;
  }

  /** One stream's gate. */
  interface Gate {
    /** Waits until the reader can take a batch: true, or false if it cancelled. */
    boolean awaitReady();
  }

  Gate register(ServerStreamListener listener) {
    BackpressureStrategy backpressure = new BackpressureStrategy.CallbackBackpressureStrategy();
    backpressure.register(listener);
    return () -> awaitReady(backpressure);
  }

  private boolean awaitReady(BackpressureStrategy backpressure) {
    long deadline = System.nanoTime() + stallTimeout.toNanos();
    while (true) {
      BackpressureStrategy.WaitResult result = backpressure.waitForListener(READY_POLL_MILLIS);
      switch (result) {
        case READY:
          return true;
        case CANCELLED:
          return false;
        case TIMEOUT:
          if (System.nanoTime() > deadline) {
            throw CallStatus.TIMED_OUT
                .withDescription("Reader did not take data for " + stallTimeout)
                .toRuntimeException();
          }
          break;
        default:
          throw CallStatus.INTERNAL
              .withDescription("Stream interrupted while waiting for the reader")
              .toRuntimeException();
      }
    }
  }
}
