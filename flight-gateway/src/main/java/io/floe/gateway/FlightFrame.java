package io.floe.gateway;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.impl.Flight.FlightData;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One {@code FlightData} message of a DoGet answer, encoded for the wire: the protobuf framing and
 * the IPC header in one small off-heap buffer, then the record batch's body buffers as they are in
 * the slice, each padded to 8 bytes. Every byte is off-heap, so Netty writes the message with a
 * gathering write instead of first copying it into a fresh direct buffer (which it does for any
 * buffer holding a heap part, such as Flight's own messages, whose header is on the heap).
 *
 * <p>A frame holds a reference to each body buffer from {@link #batch} until the bytes have been
 * written (or the frame is {@link #releaseUnclaimed released} unsent), so the slice's memory
 * outlives every message queued on a connection. {@link #whenReleased} tells the stream when that
 * happened: the moment the transport wrote the frame's last byte to the socket (the reader's HTTP/2
 * window had room for it) or dropped it with its stream.
 */
public final class FlightFrame {
  private static final IpcOption IPC = IpcOption.DEFAULT;

  /** Padding after a body buffer; unreleasable and read-only, shared by every frame. */
  private static final ByteBuf ZEROS =
      Unpooled.unreleasableBuffer(Unpooled.directBuffer(8, 8).writeZero(8).asReadOnly());

  private final ByteBuf prefix;
  private final List<ArrowBuf> body;
  private final int size;
  private final int rows;
  private boolean claimed;

  /** Runs once the frame's references are given back; set before the frame is handed to gRPC. */
  private volatile Runnable released = () -> {};

  private FlightFrame(ByteBuf prefix, List<ArrowBuf> body, int size, int rows) {
    this.prefix = prefix;
    this.body = body;
    this.size = size;
    this.rows = rows;
  }

  /** The rows of the batch this frame carries; 0 for the schema. */
  public int rows() {
    return rows;
  }

  /** The stream's first message: the schema. */
  public static FlightFrame schema(Schema schema) {
    ByteBuffer header = MessageSerializer.serializeMetadata(schema, IPC);
    ByteBuf prefix = prefix(header, null, -1);
    return new FlightFrame(prefix, List.of(), prefix.readableBytes(), 0);
  }

  /** A record batch; the frame takes references of its own to the batch's buffers. */
  public static FlightFrame batch(ArrowRecordBatch batch) {
    return batch(batch, null);
  }

  /**
   * A record batch with {@code appMetadata} (Flight's {@code app_metadata}, or null for none); the
   * frame takes references of its own to the batch's buffers.
   */
  public static FlightFrame batch(ArrowRecordBatch batch, byte[] appMetadata) {
    ByteBuffer header = MessageSerializer.serializeMetadata(batch, IPC);
    List<ArrowBuf> buffers = batch.getBuffers();
    long bodyLength = 0;
    for (ArrowBuf buffer : buffers) {
      bodyLength += padded(buffer.readableBytes());
    }
    if (bodyLength > Integer.MAX_VALUE - 64 * 1024) {
      throw new IllegalArgumentException(
          "A record batch of " + bodyLength + " bytes does not fit one Flight message");
    }
    ByteBuf prefix = prefix(header, appMetadata, (int) bodyLength);
    for (ArrowBuf buffer : buffers) {
      buffer.getReferenceManager().retain();
    }
    return new FlightFrame(
        prefix, List.copyOf(buffers), prefix.readableBytes() + (int) bodyLength, batch.getLength());
  }

  /**
   * Runs {@code action} once the frame's references are given back: written out, dropped with its
   * stream, or {@link #releaseUnclaimed released} unsent. Set before the frame is handed to gRPC;
   * it may run on a transport thread and must not block.
   */
  public FlightFrame whenReleased(Runnable action) {
    this.released = action;
    return this;
  }

  /** The message's size on the wire, without gRPC's own 5-byte prefix. */
  public int size() {
    return size;
  }

  /**
   * The message as one off-heap buffer whose release gives back the frame's references. Called
   * once, when gRPC serializes the message; from then on the buffer owns what the frame held.
   */
  ByteBuf claim() {
    if (claimed) {
      throw new IllegalStateException("A Flight frame is written once");
    }
    claimed = true;
    List<ByteBuf> parts = new ArrayList<>(1 + 2 * body.size());
    parts.add(prefix);
    for (ArrowBuf buffer : body) {
      int length = (int) buffer.readableBytes();
      if (length > 0) {
        parts.add(Unpooled.wrappedBuffer(buffer.nioBuffer(buffer.readerIndex(), length)));
      }
      int padding = padded(length) - length;
      if (padding > 0) {
        parts.add(ZEROS.slice(0, padding));
      }
    }
    return new BodyHoldingBuf(parts, body, released);
  }

  /** Gives back the frame's references if it was never written (the call ended first). */
  public void releaseUnclaimed() {
    if (!claimed) {
      claimed = true;
      prefix.release();
      body.forEach(buffer -> buffer.getReferenceManager().release());
      released.run();
    }
  }

  private static int padded(long length) {
    return (int) ((length + 7) & ~7L);
  }

  /**
   * {@code data_header}, then {@code app_metadata} when there is one, and for a batch the tag and
   * length of {@code data_body}.
   */
  private static ByteBuf prefix(ByteBuffer header, byte[] appMetadata, int bodyLength) {
    int headerLength = header.remaining();
    int size =
        CodedOutputStream.computeTagSize(FlightData.DATA_HEADER_FIELD_NUMBER)
            + CodedOutputStream.computeUInt32SizeNoTag(headerLength)
            + headerLength;
    if (appMetadata != null) {
      size +=
          CodedOutputStream.computeByteArraySize(FlightData.APP_METADATA_FIELD_NUMBER, appMetadata);
    }
    if (bodyLength >= 0) {
      size +=
          CodedOutputStream.computeTagSize(FlightData.DATA_BODY_FIELD_NUMBER)
              + CodedOutputStream.computeUInt32SizeNoTag(bodyLength);
    }
    ByteBuf prefix = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
    try {
      CodedOutputStream out = CodedOutputStream.newInstance(prefix.nioBuffer(0, size));
      out.writeTag(FlightData.DATA_HEADER_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
      out.writeUInt32NoTag(headerLength);
      out.write(header.duplicate());
      if (appMetadata != null) {
        out.writeByteArray(FlightData.APP_METADATA_FIELD_NUMBER, appMetadata);
      }
      if (bodyLength >= 0) {
        out.writeTag(FlightData.DATA_BODY_FIELD_NUMBER, WireFormat.WIRETYPE_LENGTH_DELIMITED);
        out.writeUInt32NoTag(bodyLength);
      }
      out.flush();
      out.checkNoSpaceLeft();
    } catch (IOException | RuntimeException e) {
      prefix.release();
      throw new IllegalStateException("Could not encode a Flight message header", e);
    }
    return prefix.writerIndex(size);
  }

  /** The wire bytes of one frame; releasing the last reference gives back the body buffers. */
  private static final class BodyHoldingBuf extends CompositeByteBuf {
    private final List<ArrowBuf> body;
    private final Runnable released;

    BodyHoldingBuf(List<ByteBuf> parts, List<ArrowBuf> body, Runnable released) {
      // Never merge components: merging copies, and Netty adds components when it coalesces.
      super(UnpooledByteBufAllocator.DEFAULT, true, Integer.MAX_VALUE, parts);
      this.body = body;
      this.released = released;
    }

    @Override
    protected void deallocate() {
      super.deallocate();
      for (ArrowBuf buffer : body) {
        buffer.getReferenceManager().release();
      }
      released.run();
    }
  }
}
