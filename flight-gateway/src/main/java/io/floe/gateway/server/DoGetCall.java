package io.floe.gateway.server;

import io.floe.gateway.BatchSource;
import io.floe.gateway.FlightErrors;
import io.floe.gateway.FlightFrame;
import io.floe.protocol.ErrorCode;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.grpc.StatusUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One DoGet call, driven by gRPC's flow control: whenever the reader's transport is ready, batches
 * are pulled from the source and written until it is not (or the source ends). No thread waits on a
 * slow reader; one that takes nothing for the stall timeout gets TIMED_OUT. The source (and the
 * slice lease it holds) is closed exactly once, however the call ends.
 */
final class DoGetCall {
  private static final Logger LOG = LoggerFactory.getLogger(DoGetCall.class);

  private final ServerCallStreamObserver<FlightFrame> observer;
  private final BatchSource source;
  private final Duration stallTimeout;
  private final ScheduledExecutorService timer;
  private final StreamMetrics metrics;
  private boolean schemaSent;
  private boolean ended;
  private long batches;

  /** When the transport last refused more, while it still does; 0 when it is taking data. */
  private long blockedSince;

  private DoGetCall(
      ServerCallStreamObserver<FlightFrame> observer,
      BatchSource source,
      Duration stallTimeout,
      ScheduledExecutorService timer,
      StreamMetrics metrics) {
    this.observer = observer;
    this.source = source;
    this.stallTimeout = stallTimeout;
    this.timer = timer;
    this.metrics = metrics;
  }

  /**
   * Starts answering; called from gRPC's method handler, where the call's callbacks must be set.
   */
  static void start(
      ServerCallStreamObserver<FlightFrame> observer,
      BatchSource source,
      Duration stallTimeout,
      ScheduledExecutorService timer,
      StreamMetrics metrics) {
    DoGetCall call = new DoGetCall(observer, source, stallTimeout, timer, metrics);
    metrics.opened();
    observer.setOnCancelHandler(call::cancelled);
    observer.setOnReadyHandler(call::pump);
    // gRPC runs the ready handler once the call is ready, also when it already was.
  }

  /** Writes while the transport takes data. */
  private synchronized void pump() {
    if (ended) {
      return;
    }
    try {
      while (observer.isReady()) {
        FlightFrame frame;
        if (!schemaSent) {
          frame = source.schema();
          schemaSent = true;
        } else {
          frame = source.next();
          if (frame == null) {
            end(StreamMetrics.Outcome.COMPLETED);
            observer.onCompleted();
            LOG.debug("DoGet answered: {} batches", batches);
            return;
          }
          batches++;
        }
        send(frame);
        if (ended) {
          return;
        }
      }
      if (blockedSince == 0) {
        blockedSince = System.nanoTime();
        metrics.waitingStarted();
        watch(stallTimeout.toNanos());
      }
    } catch (RuntimeException e) {
      fail(e);
    }
  }

  private void send(FlightFrame frame) {
    unblocked();
    metrics.sent(frame);
    try {
      observer.onNext(frame);
    } finally {
      // gRPC drops a message without serializing it when the call was cancelled meanwhile.
      frame.releaseUnclaimed();
    }
  }

  private void watch(long delayNanos) {
    timer.schedule(this::checkStalled, delayNanos, TimeUnit.NANOSECONDS);
  }

  private synchronized void checkStalled() {
    if (ended || blockedSince == 0) {
      return;
    }
    long waited = System.nanoTime() - blockedSince;
    if (waited < stallTimeout.toNanos()) {
      watch(stallTimeout.toNanos() - waited);
      return;
    }
    fail(
        FlightErrors.error(
            ErrorCode.STREAM_STALLED, "Reader did not take data for " + stallTimeout),
        StreamMetrics.Outcome.STALLED);
  }

  private synchronized void cancelled() {
    if (!ended) {
      LOG.debug("DoGet cancelled by the reader after {} batches", batches);
      end(StreamMetrics.Outcome.CANCELLED);
    }
  }

  private void fail(Throwable error) {
    fail(error, StreamMetrics.Outcome.FAILED);
  }

  private void fail(Throwable error, StreamMetrics.Outcome outcome) {
    if (ended) {
      return;
    }
    end(outcome);
    RuntimeException status = FlightErrors.wrap(error);
    LOG.debug("DoGet failed after {} batches: {}", batches, status.toString());
    observer.onError(StatusUtils.toGrpcException(status));
  }

  private void unblocked() {
    if (blockedSince != 0) {
      blockedSince = 0;
      metrics.waitingEnded();
    }
  }

  private void end(StreamMetrics.Outcome outcome) {
    ended = true;
    unblocked();
    metrics.ended(outcome);
    source.close();
  }
}
