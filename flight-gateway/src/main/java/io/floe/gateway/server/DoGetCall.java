package io.floe.gateway.server;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.gateway.BatchSource;
import io.floe.gateway.FlightErrors;
import io.floe.gateway.FlightFrame;
import io.floe.protocol.ErrorCode;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.grpc.StatusUtils;
import org.apache.arrow.memory.OutOfMemoryException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One DoGet call, driven by gRPC's flow control: whenever the reader's transport is ready, batches
 * are pulled from the source and written until it is not (or the source ends). No thread waits on a
 * slow reader. The source (and the slice lease it holds) is closed exactly once, however the call
 * ends.
 *
 * <p>Frames handed to gRPC keep their slice's buffers until the transport has written them, and the
 * stream buffer (Flight's backpressure threshold, 64 MiB by default) often holds a whole slice: a
 * reader that stops can pin memory long after the source is done. So the call watches until the
 * transport has let go of every frame, not only until the source ends:
 *
 * <ul>
 *   <li>stalled: frames are waiting and none was written for {@code stallTimeout} (the reader took
 *       nothing), however much the buffer holds and whether or not the source has ended;
 *   <li>withdrawn: the source's slice was released (dataset dropped, failed or moved away).
 * </ul>
 *
 * Either ends the call with its status, and if the transport has not finished within {@link
 * #RESET_GRACE} (a reader that does not read never takes the trailers, which queue behind the
 * data), its HTTP/2 stream is reset ({@link StreamResets}): the transport drops what it queued and
 * the buffers come back, whatever the reader does. A reset reader sees the stream cancelled rather
 * than the status.
 */
final class DoGetCall {
  private static final Logger LOG = LoggerFactory.getLogger(DoGetCall.class);

  /** How long an ended call's trailers may take to reach the reader before its stream is reset. */
  static final Duration RESET_GRACE = Duration.ofSeconds(1);

  /** How often a call looks for a stall or a withdrawn source, at most. */
  private static final Duration WATCH_PERIOD = Duration.ofSeconds(1);

  private enum State {
    /** Writing the source's batches. */
    STREAMING,
    /** The source ended and the call was completed; the transport still writes what it queued. */
    DRAINING,
    /** Ended with an error (outcome counted); reset unless the transport finishes within grace. */
    ENDING,
    /** gRPC reported the call closed or cancelled, or its stream was reset. */
    CLOSED
  }

  private final ServerCallStreamObserver<FlightFrame> observer;
  private final BatchSource source;
  private final Runnable resetStream;
  private final Duration stallTimeout;
  private final ScheduledExecutorService timer;
  private final StreamMetrics metrics;
  private State state = State.STREAMING;
  private boolean schemaSent;
  private boolean sourceClosed;
  private boolean blocked;
  private long batches;
  private ScheduledFuture<?> watch;

  /** Frames handed to gRPC whose buffers the transport still holds. */
  private final AtomicInteger unwritten = new AtomicInteger();

  /** When a frame was last handed to gRPC or written out by it (System.nanoTime()). */
  private volatile long lastProgress = System.nanoTime();

  private DoGetCall(
      ServerCallStreamObserver<FlightFrame> observer,
      BatchSource source,
      Runnable resetStream,
      Duration stallTimeout,
      ScheduledExecutorService timer,
      StreamMetrics metrics) {
    this.observer = observer;
    this.source = source;
    this.resetStream = resetStream;
    this.stallTimeout = stallTimeout;
    this.timer = timer;
    this.metrics = metrics;
  }

  /**
   * Starts answering; called from gRPC's method handler, where the call's callbacks must be set.
   * {@code resetStream} resets the call's HTTP/2 stream (see {@link StreamResets}).
   */
  static void start(
      ServerCallStreamObserver<FlightFrame> observer,
      BatchSource source,
      Runnable resetStream,
      Duration stallTimeout,
      ScheduledExecutorService timer,
      StreamMetrics metrics) {
    DoGetCall call = new DoGetCall(observer, source, resetStream, stallTimeout, timer, metrics);
    metrics.opened();
    observer.setOnCancelHandler(call::cancelled);
    observer.setOnCloseHandler(call::closed);
    observer.setOnReadyHandler(call::pump);
    // gRPC runs the ready handler once the call is ready, also when it already was.
    call.startWatching();
  }

  private synchronized void startWatching() {
    if (state != State.CLOSED) {
      long period = Math.min(WATCH_PERIOD.toNanos(), stallTimeout.toNanos());
      watch = timer.scheduleWithFixedDelay(this::check, period, period, TimeUnit.NANOSECONDS);
    }
  }

  /** Writes while the transport takes data. */
  private synchronized void pump() {
    if (state != State.STREAMING) {
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
            unblocked();
            closeSource();
            state = State.DRAINING;
            observer.onCompleted();
            LOG.debug("DoGet answered: {} batches", batches);
            return;
          }
          batches++;
        }
        send(frame);
        if (state != State.STREAMING) {
          return;
        }
      }
      if (!blocked) {
        blocked = true;
        metrics.waitingStarted();
      }
    } catch (OutOfMemoryException e) {
      // A batch gathered for a job's read is built here, in the node's Arrow memory.
      end(
          new FloeException(
              ErrorKind.RESOURCE_EXHAUSTED,
              "The node's Arrow memory is full: the next batch of this stream does not fit ("
                  + e.getMessage()
                  + ")",
              e),
          StreamMetrics.Outcome.FAILED);
    } catch (RuntimeException e) {
      end(e, StreamMetrics.Outcome.FAILED);
    }
  }

  private void send(FlightFrame frame) {
    unblocked();
    metrics.sent(frame);
    unwritten.incrementAndGet();
    lastProgress = System.nanoTime();
    frame.whenReleased(this::written);
    try {
      observer.onNext(frame);
    } finally {
      // gRPC drops a message without serializing it when the call was cancelled meanwhile.
      frame.releaseUnclaimed();
    }
  }

  /** A frame's buffers were given back: written to the socket, or dropped with the stream. */
  private void written() {
    unwritten.decrementAndGet();
    lastProgress = System.nanoTime();
  }

  /** The timer's look at a call the transport has not finished with. */
  private synchronized void check() {
    if (state == State.CLOSED || state == State.ENDING) {
      return;
    }
    try {
      if (source.withdrawn()) {
        end(
            FlightErrors.error(
                ErrorCode.SLICE_NOT_HELD,
                "The slice this stream reads was released (its dataset was dropped or it moved);"
                    + " plan the read again"),
            StreamMetrics.Outcome.WITHDRAWN);
        return;
      }
    } catch (RuntimeException e) {
      end(e, StreamMetrics.Outcome.FAILED);
      return;
    }
    if (unwritten.get() > 0 && System.nanoTime() - lastProgress >= stallTimeout.toNanos()) {
      end(
          FlightErrors.error(
              ErrorCode.STREAM_STALLED, "Reader did not take data for " + stallTimeout),
          StreamMetrics.Outcome.STALLED);
    }
  }

  private synchronized void cancelled() {
    if (state == State.STREAMING || state == State.DRAINING) {
      LOG.debug("DoGet cancelled by the reader after {} batches", batches);
      metrics.ended(StreamMetrics.Outcome.CANCELLED);
    }
    finish();
  }

  /** gRPC wrote everything, trailers included. */
  private synchronized void closed() {
    if (state == State.DRAINING) {
      metrics.ended(StreamMetrics.Outcome.COMPLETED);
    }
    finish();
  }

  /** Ends the call with {@code error}'s status; the stream is reset unless it closes in grace. */
  private void end(Throwable error, StreamMetrics.Outcome outcome) {
    if (state == State.CLOSED || state == State.ENDING) {
      return;
    }
    boolean completed = state == State.DRAINING;
    state = State.ENDING;
    unblocked();
    closeSource();
    metrics.ended(outcome);
    RuntimeException status = FlightErrors.wrap(error);
    LOG.debug("DoGet ended after {} batches: {}", batches, status.toString());
    if (!completed) {
      observer.onError(StatusUtils.toGrpcException(status));
    }
    timer.schedule(this::resetIfOpen, RESET_GRACE.toNanos(), TimeUnit.NANOSECONDS);
  }

  private synchronized void resetIfOpen() {
    if (state == State.ENDING) {
      LOG.debug("DoGet's stream reset: {} frames were still queued", unwritten.get());
      finish();
      resetStream.run();
    }
  }

  private void finish() {
    state = State.CLOSED;
    unblocked();
    closeSource();
    if (watch != null) {
      watch.cancel(false);
    }
  }

  private void unblocked() {
    if (blocked) {
      blocked = false;
      metrics.waitingEnded();
    }
  }

  private void closeSource() {
    if (!sourceClosed) {
      sourceClosed = true;
      source.close();
    }
  }
}
