package io.floe.resources;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Frees what readers may still hold a moment later: a slice that left this node (or a layout that
 * was replaced) keeps its memory for the linger, so streams that began before it moved finish.
 */
public final class Retirement implements AutoCloseable {
  /** The longest linger while the node shuts down: the grace period must cover it. */
  public static final Duration SHUTDOWN_LINGER_MAX = Duration.ofSeconds(20);

  private final Duration linger;
  private final AtomicInteger retiring = new AtomicInteger();
  private final ScheduledExecutorService timers =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "floe-slice-timers");
            t.setDaemon(true);
            return t;
          });

  Retirement(Duration linger) {
    this.linger = linger;
  }

  public Duration linger() {
    return linger;
  }

  /** Runs {@code release} after the linger (at most {@link #SHUTDOWN_LINGER_MAX} at shutdown). */
  public void retire(Runnable release, boolean shuttingDown) {
    Duration wait =
        shuttingDown && linger.compareTo(SHUTDOWN_LINGER_MAX) > 0 ? SHUTDOWN_LINGER_MAX : linger;
    retiring.incrementAndGet();
    timers.schedule(
        () -> {
          try {
            release.run();
          } finally {
            retiring.decrementAndGet();
          }
        },
        wait.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Waits until every retired slice was released; false if that took longer than allowed. */
  public boolean awaitRetired(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (retiring.get() > 0 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return retiring.get() == 0;
  }

  @Override
  public void close() {
    timers.shutdownNow();
  }
}
