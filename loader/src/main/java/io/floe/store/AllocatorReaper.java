package io.floe.store;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes slice allocators once their memory is really back. Flight writes batches without copying,
 * so the transport may still hold a released slice's buffers until the socket has taken them;
 * closing the allocator before that would fail and strand the memory. The reaper polls each pending
 * allocator and closes it when it has drained. A node waits for it before closing its root
 * allocator.
 */
public final class AllocatorReaper implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AllocatorReaper.class);
  private static final long POLL_MILLIS = 20;

  private final Set<BufferAllocator> pending = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "floe-allocator-reaper");
            t.setDaemon(true);
            return t;
          });

  public AllocatorReaper() {
    timer.scheduleWithFixedDelay(this::reap, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** Closes the allocator now if it holds nothing, else as soon as it has drained. */
  public void closeWhenDrained(BufferAllocator allocator) {
    if (allocator.getAllocatedMemory() == 0) {
      allocator.close();
    } else {
      pending.add(allocator);
    }
  }

  private void reap() {
    for (BufferAllocator allocator : pending) {
      if (allocator.getAllocatedMemory() == 0) {
        pending.remove(allocator);
        try {
          allocator.close();
        } catch (RuntimeException e) {
          LOG.error("Failed to close drained allocator {}", allocator.getName(), e);
        }
      }
    }
  }

  /** Bytes released by their owners but still held by the transport. */
  public long pendingBytes() {
    return pending.stream().mapToLong(BufferAllocator::getAllocatedMemory).sum();
  }

  /** Waits up to {@code timeout} for every pending allocator to drain and close. */
  public boolean awaitDrained(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!pending.isEmpty() && System.nanoTime() < deadline) {
      reap();
      try {
        Thread.sleep(POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return pending.isEmpty();
  }

  @Override
  public void close() {
    timer.shutdownNow();
    reap();
  }
}
