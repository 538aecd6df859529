package io.floe.multijvm;

import io.floe.client.FloeClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.vector.BigIntVector;

/** Helpers for reading while the cluster changes, and for watching it answer meanwhile. */
final class ClusterReads {
  private ClusterReads() {}

  /**
   * A reader of the whole dataset that counts how often each id arrives. It can be slowed down so
   * that cluster changes happen mid-read, and it opens a latch after a number of batches.
   */
  static final class CountingReader {
    final Map<Long, Integer> seen = new ConcurrentHashMap<>();
    final CountDownLatch started;
    final AtomicBoolean slow = new AtomicBoolean(true);
    final AtomicLong batches = new AtomicLong();

    CountingReader(int batchesBeforeLatch) {
      this.started = new CountDownLatch(batchesBeforeLatch);
    }

    long read(FloeClient client, String dataset) {
      return client.readShard(
          dataset,
          0,
          1,
          Duration.ofMinutes(3),
          root -> {
            BigIntVector ids = (BigIntVector) root.getVector("id");
            for (int i = 0; i < root.getRowCount(); i++) {
              seen.merge(ids.get(i), 1, Integer::sum);
            }
            batches.incrementAndGet();
            started.countDown();
            if (slow.get()) {
              sleep(120);
            }
          });
    }

    long duplicates() {
      return seen.values().stream().filter(n -> n > 1).count();
    }
  }

  /**
   * Asks one node for the dataset's status and plan every few hundred milliseconds and records
   * every call that got no answer (a transport failure or timeout). "Not ready" is an answer.
   */
  static final class Watcher implements AutoCloseable {
    final List<String> unanswered = new CopyOnWriteArrayList<>();
    final AtomicLong answered = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;

    Watcher(FloeClient client, String dataset) {
      thread =
          new Thread(
              () -> {
                while (running.get()) {
                  try {
                    client.status(dataset);
                    answered.incrementAndGet();
                    client.plan(dataset, 0, 1);
                    answered.incrementAndGet();
                  } catch (FlightRuntimeException e) {
                    String description = String.valueOf(e.status().description());
                    if (description.contains("is not ready")) {
                      answered.incrementAndGet();
                    } else {
                      unanswered.add(e.status().code() + ": " + description);
                    }
                  }
                  sleep(300);
                }
              },
              "cluster-watcher");
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      running.set(false);
      thread.join(10_000);
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
