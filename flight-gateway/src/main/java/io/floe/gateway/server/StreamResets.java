package io.floe.gateway.server;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import java.util.concurrent.TimeoutException;

/**
 * Lets a DoGet call reset its own HTTP/2 stream (RST_STREAM), which makes the transport drop the
 * frames the stream still has queued and so give back the slice buffers they reference.
 *
 * <p>Why this is needed: {@code ServerCall.close(status)} only queues the trailers behind the data
 * frames flow control holds back, so the frames of a reader that stopped reading stay queued (and
 * their memory pinned) for as long as its connection lasts. gRPC resets a server stream in one case
 * only: when the call's context is cancelled with a {@link TimeoutException} as its cause (a
 * deadline). Its {@code ServerImpl} creates each call's cancellable context from the context its
 * stream tracers filter, and the handler sees only children of it (Flight's middleware adds
 * another), so this tracer puts a cancellable context of its own beneath the call's: cancelling it
 * cancels the call's context with the same cause, exactly as a deadline that expired would. Only
 * public gRPC API is used; the reset itself relies on gRPC treating an expired deadline that way
 * (grpc-core's {@code ServerImpl}, checked on 1.79), which {@code StalledReaderMemoryTest} proves.
 */
final class StreamResets extends ServerStreamTracer.Factory {
  private static final Context.Key<Context.CancellableContext> CALL =
      Context.key("floe-stream-reset");

  private static final ServerStreamTracer UNTOUCHED = new ServerStreamTracer() {};

  private final String method;

  /** Makes the calls of {@code fullMethodName} resettable; other calls are left alone. */
  StreamResets(String fullMethodName) {
    this.method = fullMethodName;
  }

  @Override
  public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
    if (!method.equals(fullMethodName)) {
      return UNTOUCHED;
    }
    return new ServerStreamTracer() {
      @Override
      public Context filterContext(Context context) {
        Context.CancellableContext resettable = context.withCancellation();
        return resettable.withValue(CALL, resettable);
      }
    };
  }

  /**
   * What resets the stream of the call running on this thread; does nothing where the call was not
   * made resettable (another transport).
   */
  static Runnable currentCall() {
    Context.CancellableContext call = CALL.get();
    if (call == null) {
      return () -> {};
    }
    return () -> call.cancel(new TimeoutException("the stream was reset by the server"));
  }
}
