package io.floe.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.io.FileRange;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What {@link ParallelRangeStream} asks an object store for: a vectored read's ranges in pieces of
 * at most the range size, several in flight at once, each landing in its range's buffer; a failed
 * piece fails its range; a footer read at the end of the file is one request.
 */
class ParallelRangeStreamTest {
  private static final int PIECE = 64 * 1024;
  private final ParallelReads reads = ParallelReads.of(4, PIECE);

  @AfterEach
  void close() {
    reads.close();
  }

  /** A file in memory whose streams record every ranged request. */
  private static class RecordingFile implements InputFile {
    final byte[] bytes;
    final List<long[]> requests = Collections.synchronizedList(new ArrayList<>());
    volatile CountDownLatch together = new CountDownLatch(0);
    volatile long failAt = -1;

    RecordingFile(int size) {
      bytes = new byte[size];
      new Random(size).nextBytes(bytes);
    }

    @Override
    public long getLength() {
      return bytes.length;
    }

    @Override
    public String location() {
      return "s3://bucket/file.parquet";
    }

    @Override
    public boolean exists() {
      return true;
    }

    @Override
    public SeekableInputStream newStream() {
      return new Stream();
    }

    private final class Stream extends SeekableInputStream implements RangeReadable {
      private long pos;

      @Override
      public long getPos() {
        return pos;
      }

      @Override
      public void seek(long newPos) {
        pos = newPos;
      }

      @Override
      public int read() {
        throw new UnsupportedOperationException("byte reads are not expected");
      }

      @Override
      public void readFully(long position, byte[] buffer, int offset, int length)
          throws IOException {
        requests.add(new long[] {position, length});
        together.countDown();
        try {
          together.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        if (failAt >= position && failAt < position + length) {
          throw new EOFException("refused at " + failAt);
        }
        System.arraycopy(bytes, (int) position, buffer, offset, length);
      }

      @Override
      public int readTail(byte[] buffer, int offset, int length) throws IOException {
        readFully(bytes.length - length, buffer, offset, length);
        return length;
      }
    }
  }

  @Test
  void rangesArriveInPiecesOfAtMostTheRangeSizeSeveralAtOnce() throws Exception {
    RecordingFile file = new RecordingFile(1 << 20);
    // Four pieces must be in flight together before any of them answers.
    file.together = new CountDownLatch(4);
    List<FileRange> ranges =
        List.of(
            new FileRange(new CompletableFuture<>(), 1000, 3 * PIECE + 17),
            new FileRange(new CompletableFuture<>(), 600_000, 100));
    try (SeekableInputStream stream = reads.wrap(file).newStream()) {
      ((RangeReadable) stream).readVectored(ranges, ByteBuffer::allocate);
      for (FileRange range : ranges) {
        ByteBuffer buffer = range.byteBuffer().get(10, TimeUnit.SECONDS);
        assertThat(buffer.position()).isZero();
        assertThat(buffer.remaining()).isEqualTo(range.length());
        byte[] expected = new byte[range.length()];
        System.arraycopy(file.bytes, (int) range.offset(), expected, 0, range.length());
        assertThat(buffer.array()).isEqualTo(expected);
      }
    }
    assertThat(file.together.getCount()).as("pieces that were not in flight together").isZero();
    assertThat(file.requests)
        .hasSize(5)
        .allSatisfy(r -> assertThat(r[1]).isLessThanOrEqualTo(PIECE));
  }

  @Test
  void aFailedPieceFailsItsRangeWithTheStoresError() throws Exception {
    RecordingFile file = new RecordingFile(1 << 20);
    file.failAt = 2 * PIECE + 5;
    FileRange range = new FileRange(new CompletableFuture<>(), 0, 4 * PIECE);
    try (SeekableInputStream stream = reads.wrap(file).newStream()) {
      ((RangeReadable) stream).readVectored(List.of(range), ByteBuffer::allocate);
      assertThatThrownBy(() -> range.byteBuffer().get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(EOFException.class)
          .hasMessage("refused at " + file.failAt);
    }
  }

  @Test
  void aFooterIsReadWithOneRequest() throws Exception {
    RecordingFile file = new RecordingFile(1 << 20);
    int footer = 5_000;
    try (SeekableInputStream stream = reads.wrap(file).newStream()) {
      // Parquet's footer: the length and magic in the last 8 bytes, then the footer before them.
      stream.seek(file.bytes.length - 8);
      byte[] last = new byte[8];
      assertThat(stream.read(last, 0, 8)).isEqualTo(8);
      stream.seek(file.bytes.length - 8 - footer);
      byte[] read = new byte[footer];
      int n = 0;
      while (n < footer) {
        n += stream.read(read, n, footer - n);
      }
      byte[] expected = new byte[footer];
      System.arraycopy(file.bytes, file.bytes.length - 8 - footer, expected, 0, footer);
      assertThat(read).isEqualTo(expected);
      assertThat(stream.read()).isEqualTo(file.bytes[file.bytes.length - 8] & 0xff);
    }
    assertThat(file.requests).hasSize(1);
    assertThat(file.requests.get(0))
        .containsExactly(file.bytes.length - ParallelRangeStream.TAIL, ParallelRangeStream.TAIL);
  }

  @Test
  void localFilesAndTurnedOffReadsAreLeftAsTheyAre() {
    RecordingFile file = new RecordingFile(1024);
    assertThat(reads.wrap(file)).isInstanceOf(ParallelRangeFile.class);
    InputFile local =
        new RecordingFile(1024) {
          @Override
          public String location() {
            return "file:/tmp/x.parquet";
          }
        };
    assertThat(reads.wrap(local)).isSameAs(local);
    try (ParallelReads off = ParallelReads.of(0, PIECE)) {
      assertThat(off.wrap(file)).isSameAs(file);
    }
  }
}
