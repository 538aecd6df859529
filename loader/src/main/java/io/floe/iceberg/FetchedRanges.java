package io.floe.iceberg;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.io.FileRange;
import org.apache.iceberg.io.RangeReadable;
import org.apache.parquet.io.SeekableInputStream;

/**
 * Byte ranges of a remote file fetched at once (a {@link RangeReadable} stream's vectored read,
 * which Floe's object-store streams answer with parallel ranged requests) into accounted Arrow
 * memory, read back as a Parquet stream: what {@link RowGroupExcerpts} copies the column chunks of
 * an object-store file from. Reads outside the fetched ranges fail.
 */
final class FetchedRanges extends SeekableInputStream {
  private final String location;
  private final long[] starts;
  private final ByteBuffer[] bytes;
  private final List<ArrowBuf> held;
  private long pos;

  private FetchedRanges(String location, long[] starts, ByteBuffer[] bytes, List<ArrowBuf> held) {
    this.location = location;
    this.starts = starts;
    this.bytes = bytes;
    this.held = held;
  }

  /**
   * Fetches {@code ranges} ({offset, length} pairs in file order, none overlapping) of {@code from}
   * into buffers of {@code allocator}, which closing the result returns. On a failure {@code from}
   * is closed, which waits for the requests still writing into the buffers, before they are freed.
   */
  static FetchedRanges fetch(
      RangeReadable from, String location, List<long[]> ranges, BufferAllocator allocator)
      throws IOException {
    List<ArrowBuf> held = new ArrayList<>(ranges.size());
    List<FileRange> asked = new ArrayList<>(ranges.size());
    long[] starts = new long[ranges.size()];
    try {
      for (int i = 0; i < starts.length; i++) {
        long[] range = ranges.get(i);
        starts[i] = range[0];
        asked.add(new FileRange(new CompletableFuture<>(), range[0], Math.toIntExact(range[1])));
      }
      from.readVectored(
          asked,
          length -> {
            ArrowBuf buffer = allocator.buffer(length);
            held.add(buffer);
            return buffer.nioBuffer(0, length);
          });
      ByteBuffer[] bytes = new ByteBuffer[starts.length];
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = asked.get(i).byteBuffer().get();
      }
      return new FetchedRanges(location, starts, bytes, held);
    } catch (InterruptedException e) {
      release(from, held, e);
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("Interrupted reading " + location);
    } catch (ExecutionException e) {
      release(from, held, e);
      Throwable cause = e.getCause();
      throw cause instanceof IOException io ? io : new IOException("Reading " + location, cause);
    } catch (IOException | RuntimeException | Error e) {
      release(from, held, e);
      throw e;
    }
  }

  /** Closes the stream (waiting for its requests in flight), then frees their buffers. */
  private static void release(java.io.Closeable from, List<ArrowBuf> held, Throwable failure) {
    try {
      from.close();
    } catch (IOException | RuntimeException e) {
      failure.addSuppressed(e);
    } finally {
      held.forEach(ArrowBuf::close);
    }
  }

  /** The fetched range holding {@code at}, or -1. */
  private int rangeOf(long at) {
    int i = Arrays.binarySearch(starts, at);
    i = i >= 0 ? i : -i - 2;
    return i >= 0 && at < starts[i] + bytes[i].limit() ? i : -1;
  }

  @Override
  public long getPos() {
    return pos;
  }

  @Override
  public void seek(long newPos) {
    pos = newPos;
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    return read(one, 0, 1) <= 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    int i = rangeOf(pos);
    if (i < 0) {
      throw new EOFException(
          "Byte " + pos + " of " + location + " is outside the column chunks fetched");
    }
    int at = (int) (pos - starts[i]);
    int n = Math.min(len, bytes[i].limit() - at);
    bytes[i].duplicate().position(at).get(b, off, n);
    pos += n;
    return n;
  }

  @Override
  public void readFully(byte[] b) throws IOException {
    readFully(b, 0, b.length);
  }

  @Override
  public void readFully(byte[] b, int off, int len) throws IOException {
    while (len > 0) {
      int n = read(b, off, len);
      off += n;
      len -= n;
    }
  }

  @Override
  public int read(ByteBuffer into) throws IOException {
    byte[] chunk = new byte[into.remaining()];
    int n = read(chunk, 0, chunk.length);
    if (n > 0) {
      into.put(chunk, 0, n);
    }
    return n;
  }

  @Override
  public void readFully(ByteBuffer into) throws IOException {
    byte[] chunk = new byte[into.remaining()];
    readFully(chunk, 0, chunk.length);
    into.put(chunk);
  }

  @Override
  public void close() {
    held.forEach(ArrowBuf::close);
    held.clear();
  }
}
