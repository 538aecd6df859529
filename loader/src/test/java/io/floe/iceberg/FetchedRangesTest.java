package io.floe.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.table.ParallelReads;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;
import org.junit.jupiter.api.Test;

/**
 * A fetch of several ranges that fails on one frees its buffers only once the other ranges'
 * requests still running are done writing into them: freed Arrow memory goes straight back to the
 * pool, where another slice's data would be overwritten.
 */
class FetchedRangesTest {
  private static final String LOCATION = "s3://bucket/f.parquet";

  /** When the slow range's request finished writing its bytes. */
  private static final java.util.concurrent.atomic.AtomicLong SLOW_WRITTEN =
      new java.util.concurrent.atomic.AtomicLong();

  /** Range 0 fails once range 1's request is under way; range 1 writes 300 ms later. */
  private static final class OneFailsOneIsSlow extends SeekableInputStream
      implements RangeReadable {
    final CountDownLatch slowStarted;

    OneFailsOneIsSlow(CountDownLatch slowStarted) {
      this.slowStarted = slowStarted;
    }

    @Override
    public void readFully(long at, byte[] bytes, int off, int len) throws IOException {
      if (at == 0) {
        try {
          slowStarted.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new IOException("the first range fails");
      }
      slowStarted.countDown();
      try {
        Thread.sleep(300);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Arrays.fill(bytes, off, off + len, (byte) 0x55);
      SLOW_WRITTEN.set(System.nanoTime());
    }

    @Override
    public int readTail(byte[] bytes, int off, int len) {
      return 0;
    }

    @Override
    public long getPos() {
      return 0;
    }

    @Override
    public void seek(long position) {}

    @Override
    public int read() {
      return -1;
    }
  }

  @Test
  void aFailedFetchFreesItsBuffersOnlyAfterTheRequestsStillWritingIntoThem() throws Exception {
    CountDownLatch slowStarted = new CountDownLatch(1);
    FileIO store =
        new FileIO() {
          @Override
          public InputFile newInputFile(String path) {
            return new InputFile() {
              @Override
              public long getLength() {
                return 10 << 20;
              }

              @Override
              public SeekableInputStream newStream() {
                return new OneFailsOneIsSlow(slowStarted); // a fresh stream per request
              }

              @Override
              public String location() {
                return path;
              }

              @Override
              public boolean exists() {
                return true;
              }
            };
          }

          @Override
          public OutputFile newOutputFile(String path) {
            throw new UnsupportedOperationException();
          }

          @Override
          public void deleteFile(String path) {}
        };
    try (ParallelReads reads = ParallelReads.of(4, 64 * 1024);
        BufferAllocator allocator = new RootAllocator()) {
      SeekableInputStream stream = reads.wrap(store).newInputFile(LOCATION, 10 << 20).newStream();
      assertThat(ParallelReads.readsInParallel(stream)).isTrue();
      try (BufferAllocator fetched = allocator.newChildAllocator("fetched", 0, Long.MAX_VALUE)) {
        assertThatThrownBy(
                () ->
                    FetchedRanges.fetch(
                        (RangeReadable) stream,
                        LOCATION,
                        List.of(new long[] {0, 65536}, new long[] {1 << 20, 65536}),
                        fetched))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("the first range fails");
        long returned = System.nanoTime();
        assertThat(fetched.getAllocatedMemory()).isZero();
        assertThat(slowStarted.getCount()).isZero();
        assertThat(SLOW_WRITTEN.get())
            .as("the slow range wrote before its buffer was freed")
            .isPositive()
            .isLessThan(returned);
      }
    }
  }
}
