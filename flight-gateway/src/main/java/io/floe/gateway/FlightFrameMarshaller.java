package io.floe.gateway;

import io.grpc.Drainable;
import io.grpc.MethodDescriptor;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.arrow.flight.grpc.AddWritableBuffer;

/**
 * Hands a {@link FlightFrame}'s buffer to gRPC's message framer by reference: the framer's chain of
 * Netty buffers takes the frame's composite as it is, so no byte of a record batch is copied on its
 * way to the socket. (Where the framer is not Netty's, the bytes are copied as a stream.) The
 * stream deliberately does not declare its length ({@code KnownLength}): for such messages gRPC
 * copies into its own buffer instead of chaining the caller's.
 */
public final class FlightFrameMarshaller implements MethodDescriptor.Marshaller<FlightFrame> {
  public static final FlightFrameMarshaller INSTANCE = new FlightFrameMarshaller();

  /** Frames gRPC took as bytes rather than by reference (none, where the transport is Netty). */
  private static final java.util.concurrent.atomic.LongAdder COPIED =
      new java.util.concurrent.atomic.LongAdder();

  private FlightFrameMarshaller() {}

  public static long framesCopied() {
    return COPIED.sum();
  }

  @Override
  public InputStream stream(FlightFrame frame) {
    return new FrameStream(frame.claim());
  }

  @Override
  public FlightFrame parse(InputStream stream) {
    throw new UnsupportedOperationException("A Floe node sends FlightData on DoGet; it reads none");
  }

  private static final class FrameStream extends InputStream implements Drainable {
    private final ByteBuf buf;
    private boolean drained;
    private boolean closed;

    FrameStream(ByteBuf buf) {
      this.buf = buf;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      // The framer may keep this very buffer (indices included): leave its reader index alone.
      int length = buf.readableBytes();
      if (!AddWritableBuffer.add(buf, target, true)) {
        COPIED.increment();
      }
      drained = true;
      return length;
    }

    @Override
    public int read() {
      return !drained && buf.isReadable() ? buf.readByte() & 0xff : -1;
    }

    @Override
    public int read(byte[] into, int offset, int length) {
      if (length == 0) {
        return 0;
      }
      int count = drained ? 0 : Math.min(length, buf.readableBytes());
      if (count == 0) {
        return -1;
      }
      buf.readBytes(into, offset, count);
      return count;
    }

    @Override
    public int available() {
      return drained ? 0 : buf.readableBytes();
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        buf.release();
      }
    }
  }
}
