package io.floe.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Batches made ahead on other threads reach the reader as the source made them, in its order, with
 * its failure in its turn; closing never closes the source under a call in progress, and gives back
 * every batch made but not taken.
 */
class ReadAheadBatchesTest {
  private BufferAllocator allocator;
  private ExecutorService executor;

  @BeforeEach
  void start() {
    allocator = new RootAllocator();
    executor = Executors.newFixedThreadPool(2);
  }

  @AfterEach
  void stop() throws InterruptedException {
    executor.shutdown();
    assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(allocator.getAllocatedMemory()).as("bytes still allocated").isZero();
    allocator.close();
  }

  /** Batch {@code k} of a source: {@code k + 1} rows of distinct values. */
  private FlightFrame frame(int k) {
    try (BigIntVector values = new BigIntVector("v", allocator)) {
      values.allocateNew(k + 1);
      for (int i = 0; i <= k; i++) {
        values.set(i, 1000L * k + i);
      }
      values.setValueCount(k + 1);
      try (VectorSchemaRoot root = VectorSchemaRoot.of(values);
          ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
        return FlightFrame.batch(batch, new byte[] {(byte) k});
      }
    }
  }

  /** The bytes a frame puts on the wire; the frame's memory is given back. */
  private static byte[] wire(FlightFrame frame) {
    ByteBuf bytes = frame.claim();
    try {
      return ByteBufUtil.getBytes(bytes);
    } finally {
      bytes.release();
    }
  }

  /**
   * {@code batches} frames, failing at batch {@code failAt} (or never, for -1), calls counted, and
   * the call of batch {@code holdAt} held until {@code release} opens.
   */
  private final class CountedSource implements BatchSource {
    final AtomicInteger calls = new AtomicInteger();
    final AtomicBoolean closed = new AtomicBoolean();
    final AtomicBoolean closedDuringCall = new AtomicBoolean();
    final CountDownLatch holding = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private final int batches;
    private final int failAt;
    private final int holdAt;
    private volatile boolean inCall;

    CountedSource(int batches, int failAt, int holdAt) {
      this.batches = batches;
      this.failAt = failAt;
      this.holdAt = holdAt;
    }

    @Override
    public FlightFrame schema() {
      return null; // not asked by these tests
    }

    @Override
    public FlightFrame next() {
      int k = calls.getAndIncrement();
      inCall = true;
      try {
        if (k == holdAt) {
          holding.countDown();
          release.await(10, TimeUnit.SECONDS);
        }
        if (k == failAt) {
          throw new IllegalStateException("batch " + k + " failed");
        }
        return k < batches ? frame(k) : null;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      } finally {
        inCall = false;
      }
    }

    @Override
    public void close() {
      closedDuringCall.compareAndSet(false, inCall);
      closed.set(true);
    }
  }

  @Test
  void givesTheSourcesBatchesInItsOrder() {
    List<byte[]> expected = new ArrayList<>();
    for (int k = 0; k < 20; k++) {
      expected.add(wire(frame(k)));
    }
    CountedSource source = new CountedSource(20, -1, -1);
    List<byte[]> read = new ArrayList<>();
    try (ReadAheadBatches ahead = new ReadAheadBatches(source, executor, 3)) {
      for (FlightFrame frame = ahead.next(); frame != null; frame = ahead.next()) {
        read.add(wire(frame));
      }
      assertThat(ahead.next()).isNull();
    }
    assertThat(read).containsExactlyElementsOf(expected);
    // Closing closes the source once the work in flight has settled, on another thread.
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilTrue(source.closed);
  }

  @Test
  void aFailureReachesTheReaderInItsTurnAndEndsTheCalls() {
    CountedSource source = new CountedSource(20, 2, -1);
    try (ReadAheadBatches ahead = new ReadAheadBatches(source, executor, 3)) {
      wire(ahead.next());
      wire(ahead.next());
      assertThatThrownBy(ahead::next)
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("batch 2 failed");
    }
    assertThat(source.calls.get()).as("no call after the failed one").isEqualTo(3);
  }

  @Test
  void closingWaitsForTheCallInProgressAndGivesBackWhatWasMadeAhead() throws Exception {
    CountedSource source = new CountedSource(20, -1, 2);
    ReadAheadBatches ahead = new ReadAheadBatches(source, executor, 3);
    wire(ahead.next()); // batch 0 taken; 1 made ahead, 2 held in the source, 3 waits for it
    assertThat(source.holding.await(10, TimeUnit.SECONDS)).isTrue();
    ahead.close();
    assertThat(source.closed).as("closed under the call").isFalse();
    source.release.countDown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!source.closed.get() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    // Closing closes the source once the work in flight has settled, on another thread.
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilTrue(source.closed);
    assertThat(source.closedDuringCall).isFalse();
    assertThat(source.calls.get()).as("no call asked after closing").isEqualTo(3);
    assertThat(ahead.next()).isNull();
    // The batches made ahead (1 and 2) are given back: @AfterEach finds no byte allocated.
  }

  /**
   * {@code batches} frames planned in order, each made by a work that waits until {@code together}
   * works are being made at once (or a few seconds): the most seen at once is counted, and closing
   * while works run is noted.
   */
  private final class StagedSource implements StagedBatchSource {
    final AtomicInteger planned = new AtomicInteger();
    final AtomicInteger making = new AtomicInteger();
    final AtomicInteger mostAtOnce = new AtomicInteger();
    final AtomicBoolean closed = new AtomicBoolean();
    final AtomicBoolean closedWhileMaking = new AtomicBoolean();
    private final int batches;
    private final int together;
    private final int failPlanAt;
    private final AtomicInteger planning = new AtomicInteger();

    StagedSource(int batches, int together, int failPlanAt) {
      this.batches = batches;
      this.together = together;
      this.failPlanAt = failPlanAt;
    }

    @Override
    public FlightFrame schema() {
      return null;
    }

    @Override
    public Work plan() {
      assertThat(planning.incrementAndGet()).as("plans one at a time").isEqualTo(1);
      try {
        int k = planned.getAndIncrement();
        if (k == failPlanAt) {
          throw new IllegalStateException("plan " + k + " failed");
        }
        return k < batches ? () -> make(k) : null;
      } finally {
        planning.decrementAndGet();
      }
    }

    private FlightFrame make(int k) {
      int now = making.incrementAndGet();
      mostAtOnce.accumulateAndGet(now, Math::max);
      try {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (mostAtOnce.get() < together && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        return frame(k);
      } finally {
        making.decrementAndGet();
      }
    }

    @Override
    public void close() {
      closedWhileMaking.compareAndSet(false, making.get() > 0);
      closed.set(true);
    }
  }

  @Test
  void aStagedSourcesBatchesAreMadeSideBySideAndComeInItsOrder() {
    List<byte[]> expected = new ArrayList<>();
    for (int k = 0; k < 20; k++) {
      expected.add(wire(frame(k)));
    }
    StagedSource source = new StagedSource(20, 2, -1);
    List<byte[]> read = new ArrayList<>();
    try (ReadAheadBatches ahead = new ReadAheadBatches(source, executor, 2)) {
      for (FlightFrame frame = ahead.next(); frame != null; frame = ahead.next()) {
        read.add(wire(frame));
      }
    }
    assertThat(read).containsExactlyElementsOf(expected);
    assertThat(source.mostAtOnce.get()).as("batches made at once").isEqualTo(2);
    // Closing closes the source once the work in flight has settled, on another thread.
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilTrue(source.closed);
    assertThat(source.closedWhileMaking).isFalse();
  }

  @Test
  void aStagedSourcesFailedPlanReachesTheReaderInItsTurn() {
    StagedSource source = new StagedSource(20, 1, 3);
    try (ReadAheadBatches ahead = new ReadAheadBatches(source, executor, 2)) {
      for (int k = 0; k < 3; k++) {
        wire(ahead.next());
      }
      assertThatThrownBy(ahead::next)
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("plan 3 failed");
    }
    assertThat(source.planned.get()).as("no plan after the failed one").isEqualTo(4);
  }

  @Test
  void closingAStagedSourceWaitsForTheBatchesBeingMade() throws Exception {
    StagedSource source = new StagedSource(20, 3, -1); // each make waits up to 2 s for a third
    ReadAheadBatches ahead = new ReadAheadBatches(source, executor, 2);
    wire(ahead.next());
    ahead.close();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!source.closed.get() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    // Closing closes the source once the work in flight has settled, on another thread.
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilTrue(source.closed);
    assertThat(source.closedWhileMaking).isFalse();
    // What was made ahead is given back: @AfterEach finds no byte allocated.
  }

  @Test
  void refusesADepthBelowOne() {
    assertThatThrownBy(() -> new ReadAheadBatches(new CountedSource(1, -1, -1), executor, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
