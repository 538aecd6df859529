package io.floe.table;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.apache.iceberg.io.FileRange;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * A stream over an object-store file for parquet-java, which reads a file's footer and then, per
 * row group, the column chunks of the projected columns as one vectored read (Iceberg's {@code
 * ParquetIO} hands {@link RangeReadable} streams' vectored reads through; adjacent chunks arrive as
 * one range). Iceberg's own streams answer a vectored read one range after another, one request
 * each; this one splits every range into pieces of at most {@link ParallelReads#rangeSize} bytes
 * and fetches them at once on the node's reading pool, each piece with a ranged request of a fresh
 * stream of the wrapped file, straight into the range's buffer.
 *
 * <p>The footer: a first read within the file's last {@link #TAIL} bytes (Parquet reads the
 * footer's length there, then seeks back to the footer) fetches that whole tail with one request,
 * and reads inside it are answered from it: one request for a footer instead of two. Other reads go
 * to the wrapped file's stream as they would without this.
 *
 * <p>Closing waits for its pieces still being fetched (and drops those not started), so no piece
 * writes into a buffer after the reader that asked for it has closed the file.
 */
final class ParallelRangeStream extends SeekableInputStream implements RangeReadable {
  /** The tail fetched for a footer: Parquet footers of tables of a few dozen columns fit. */
  static final int TAIL = 64 * 1024;

  private final InputFile file;
  private final ParallelReads reads;
  private final List<Piece> pieces = new ArrayList<>();

  /**
   * One ranged request on the pool. Whoever claims it first runs it (the pool) or drops it (close);
   * {@code finished} completes when a piece that ran is done with its buffer. A task's own future
   * cannot tell that: cancelling a running task completes its future while it still writes.
   */
  private static final class Piece {
    final java.util.concurrent.atomic.AtomicBoolean claimed =
        new java.util.concurrent.atomic.AtomicBoolean();
    final CompletableFuture<Void> finished = new CompletableFuture<>();
    Future<?> task;

    boolean isDone() {
      return finished.isDone() || (task != null && task.isCancelled());
    }
  }

  private SeekableInputStream stream;
  private long pos;
  private long length = -1;
  private byte[] tail;
  private long tailStart;
  private boolean closed;

  ParallelRangeStream(InputFile file, ParallelReads reads) {
    this.file = file;
    this.reads = reads;
  }

  private long length() {
    if (length < 0) {
      length = file.getLength();
    }
    return length;
  }

  @Override
  public long getPos() {
    return pos;
  }

  @Override
  public void seek(long newPos) throws IOException {
    checkOpen();
    if (newPos < 0) {
      throw new EOFException("Cannot seek to " + newPos + " in " + file.location());
    }
    pos = newPos;
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n <= 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    checkOpen();
    if (len == 0) {
      return 0;
    }
    if (inTail(pos)) {
      int n = (int) Math.min(len, tailStart + tail.length - pos);
      if (n <= 0) {
        return -1;
      }
      System.arraycopy(tail, (int) (pos - tailStart), b, off, n);
      pos += n;
      return n;
    }
    SeekableInputStream in = stream();
    if (in.getPos() != pos) {
      in.seek(pos);
    }
    int n = in.read(b, off, len);
    if (n > 0) {
      pos += n;
    }
    return n;
  }

  /** Whether {@code at} is answered from the tail, fetching it for a first read near the end. */
  private boolean inTail(long at) throws IOException {
    if (tail == null && stream == null) {
      long size = length();
      if (at >= size - TAIL && at < size) {
        int n = (int) Math.min(TAIL, size);
        byte[] bytes = new byte[n];
        readRange(file, size - n, bytes, 0, n);
        tail = bytes;
        tailStart = size - n;
      }
    }
    return tail != null && at >= tailStart && at < tailStart + tail.length;
  }

  private SeekableInputStream stream() {
    if (stream == null) {
      stream = file.newStream();
    }
    return stream;
  }

  @Override
  public void readFully(long position, byte[] buffer, int offset, int len) throws IOException {
    checkOpen();
    if (inTail(position) && position + len <= tailStart + tail.length) {
      System.arraycopy(tail, (int) (position - tailStart), buffer, offset, len);
      return;
    }
    readRange(file, position, buffer, offset, len);
  }

  @Override
  public int readTail(byte[] buffer, int offset, int len) throws IOException {
    checkOpen();
    long size = length();
    int n = (int) Math.min(len, size);
    readFully(size - n, buffer, offset, n);
    return n;
  }

  /**
   * Fetches every range in pieces of at most the range size, all at once on the reading pool; each
   * range's future completes with its buffer (position 0, limit its length) when its last piece
   * arrives, or exceptionally with the first piece's failure.
   */
  @Override
  public void readVectored(List<FileRange> ranges, IntFunction<ByteBuffer> allocate)
      throws IOException {
    checkOpen();
    int rangeSize = reads.rangeSize();
    for (FileRange range : RangeReadable.sortRanges(ranges)) {
      ByteBuffer buffer = allocate.apply(range.length());
      CompletableFuture<ByteBuffer> done = range.byteBuffer();
      int count = Math.max(1, (range.length() + rangeSize - 1) / rangeSize);
      AtomicInteger left = new AtomicInteger(count);
      for (int p = 0; p < count; p++) {
        int from = p * rangeSize;
        int n = Math.min(rangeSize, range.length() - from);
        long at = range.offset() + from;
        Piece piece = new Piece();
        synchronized (pieces) {
          pieces.removeIf(Piece::isDone);
          pieces.add(piece);
          piece.task =
              reads
                  .pool()
                  .submit(
                      () -> {
                        if (!piece.claimed.compareAndSet(false, true)) {
                          return; // the stream closed before this piece started
                        }
                        try {
                          if (done.isDone()) {
                            return; // another piece failed
                          }
                          fill(buffer, from, at, n);
                          if (left.decrementAndGet() == 0) {
                            done.complete(buffer);
                          }
                        } catch (IOException | RuntimeException | Error e) {
                          done.completeExceptionally(e);
                        } finally {
                          piece.finished.complete(null);
                        }
                      });
        }
      }
    }
  }

  private void fill(ByteBuffer buffer, int from, long at, int n) throws IOException {
    if (buffer.hasArray()) {
      readRange(file, at, buffer.array(), buffer.arrayOffset() + from, n);
    } else {
      byte[] piece = new byte[n];
      readRange(file, at, piece, 0, n);
      ByteBuffer target = buffer.duplicate();
      target.position(from);
      target.put(piece);
    }
  }

  /** One ranged request: {@code n} bytes at {@code at}, through a fresh stream of the file. */
  private static void readRange(InputFile file, long at, byte[] into, int off, int n)
      throws IOException {
    try (SeekableInputStream in = file.newStream()) {
      if (in instanceof RangeReadable ranged) {
        ranged.readFully(at, into, off, n);
        return;
      }
      in.seek(at);
      for (int done = 0; done < n; ) {
        int r = in.read(into, off + done, n - done);
        if (r < 0) {
          throw new EOFException(
              "Reached the end of " + file.location() + " at " + (at + done) + " of " + (at + n));
        }
        done += r;
      }
    }
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("Stream of " + file.location() + " is closed");
    }
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    List<Piece> started;
    synchronized (pieces) {
      started = new ArrayList<>(pieces);
      pieces.clear();
    }
    // Pieces not started never will be; those running are waited for, even when interrupted: the
    // caller frees the buffers they write into once this returns.
    boolean interrupted = false;
    for (Piece piece : started) {
      if (piece.claimed.compareAndSet(false, true)) {
        if (piece.task != null) {
          piece.task.cancel(false);
        }
        continue;
      }
      while (true) {
        try {
          piece.finished.get();
          break;
        } catch (ExecutionException e) {
          break; // its range's future carries any failure
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    try {
      if (stream != null) {
        stream.close();
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("Interrupted closing " + file.location());
      }
    }
  }
}
