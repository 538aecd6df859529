package io.floe.resources;

import io.floe.iceberg.MemoryNeed;
import io.floe.util.Sizes;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The cluster's admission of loads into the data nodes' memory: what admitted loads still loading
 * reserved, and the loads waiting for them. Every decision is taken against {@link MemoryFigures}
 * read for it, so it is the same whichever node the load came through; one {@link AdmissionDesk}
 * keeps the book, and nothing else touches it (not thread-safe).
 *
 * <p>A new load is admitted when all it needs ({@link MemoryNeed}: what its slices hold once loaded
 * and what those decoding at once take on top) fits in the free memory less the reservations; with
 * fewer of its slices decoding at once (at least one) when only that fits. A load that does not fit
 * while others are in flight waits (at most {@code queueLength} loads, each at most {@code
 * waitTimeout}) and is decided again each time one of them ends; one that does not fit with none in
 * flight, or could not fit even if they all gave their memory back, is refused at once with what it
 * needs and what is free. So of loads started together, those that fit one after another are
 * admitted and the rest refused, whatever the order their slices would have raced in.
 *
 * <p>Loads are keyed by dataset and load id ({@link #key}); asking again for a load already decided
 * answers the same, so a dataset entity may ask until it hears.
 */
final class AdmissionBook {
  private final int queueLength;
  private final Duration waitTimeout;

  /** Admitted loads still loading, by key, and what each reserved. */
  private final Map<String, MemoryNeed> reserved = new LinkedHashMap<>();

  /**
   * Loads waiting for the ones in flight, in the order they came; all are decided again, in that
   * order, each time one in flight ends (one that fits then goes ahead of a larger one before it).
   */
  private final Map<String, Waiting> queue = new LinkedHashMap<>();

  AdmissionBook(int queueLength, Duration waitTimeout) {
    this.queueLength = queueLength;
    this.waitTimeout = waitTimeout;
  }

  static String key(String dataset, String load) {
    return dataset + "/" + load;
  }

  /** What was decided for the load with {@code key} and still holds; null for one unknown here. */
  Admission decided(String key) {
    MemoryNeed need = reserved.get(key);
    if (need != null) {
      return new Admission.Admitted(need);
    }
    Waiting waiting = queue.get(key);
    return waiting == null ? null : new Admission.Queued(waiting.reason());
  }

  /**
   * Admits, queues or refuses the load of {@code dataset} with {@code key} that needs {@code need}.
   * A load needing nothing known is admitted with nothing reserved, and so is every load while no
   * data node's memory is known.
   */
  Admission admit(String key, String dataset, MemoryNeed need, MemoryFigures figures) {
    if (need.total() <= 0) {
      return new Admission.Admitted(need);
    }
    Admission decided = decide(dataset, need, figures, true);
    if (decided instanceof Admission.Queued && queue.size() >= queueLength) {
      decided =
          new Admission.Refused(
              shortage(dataset, need.withSlicesAtOnce(1), figures)
                  + String.format(
                      "; %d loads already wait for memory (floe.memory.admission.queue-length)",
                      queue.size()));
    }
    if (decided instanceof Admission.Admitted admitted) {
      reserved.put(key, admitted.need());
    } else if (decided instanceof Admission.Queued queued) {
      queue.put(key, new Waiting(dataset, need, queued.reason()));
    }
    return decided;
  }

  /**
   * Ends the reservation (or the wait) of the load with {@code key}: it has every slice, failed or
   * was dropped. When a reservation ended, the loads waiting are decided again on {@code figures};
   * what was decided for them, by key, in queue order.
   */
  Map<String, Admission> release(String key, MemoryFigures figures) {
    queue.remove(key);
    if (reserved.remove(key) == null) {
      return Map.of();
    }
    return decideWaiting(figures, true);
  }

  /**
   * Admits the waiting loads that fit now (memory freed by a drop, say, ends no reservation);
   * refuses none.
   */
  Map<String, Admission> recheck(MemoryFigures figures) {
    return decideWaiting(figures, false);
  }

  /** Refuses the load with {@code key} if it still waits; null if it does not. */
  Admission.Refused waitedTooLong(String key, MemoryFigures figures) {
    Waiting waiting = queue.remove(key);
    if (waiting == null) {
      return null;
    }
    return new Admission.Refused(
        shortage(waiting.dataset(), waiting.need().withSlicesAtOnce(1), figures)
            + String.format(
                "; it waited %s for %d load%s in flight (floe.memory.admission.wait-timeout)",
                duration(waitTimeout), reserved.size(), reserved.size() == 1 ? "" : "s"));
  }

  boolean waiting() {
    return !queue.isEmpty();
  }

  /** What admitted loads have reserved and not yet settled. */
  long reservedBytes() {
    return reserved.values().stream().mapToLong(MemoryNeed::total).sum();
  }

  private Map<String, Admission> decideWaiting(MemoryFigures figures, boolean mayRefuse) {
    Map<String, Admission> decisions = new LinkedHashMap<>();
    for (String key : queue.keySet().toArray(String[]::new)) {
      Waiting waiting = queue.get(key);
      Admission decided = decide(waiting.dataset(), waiting.need(), figures, mayRefuse);
      if (decided instanceof Admission.Queued) {
        continue;
      }
      queue.remove(key);
      if (decided instanceof Admission.Admitted admitted) {
        reserved.put(key, admitted.need());
      }
      decisions.put(key, decided);
    }
    return decisions;
  }

  /**
   * Admitted when {@code need} fits in the free memory less the reservations, with as many of its
   * slices decoding at once as fit (at least one); refused when {@code mayRefuse} and no load is in
   * flight (the figures are what they will stay) or it could not fit even if every load in flight
   * gave back what it reserved (or in the nodes' limits); else queued. A refusal names the least
   * the load needs: one slice decoding at a time.
   */
  private Admission decide(
      String dataset, MemoryNeed need, MemoryFigures figures, boolean mayRefuse) {
    if (!figures.known()) {
      // Nothing known yet: as before any figures were shared.
      return new Admission.Admitted(need);
    }
    long reservations = reservedBytes();
    for (int slices = need.slicesAtOnce(); slices >= 1; slices--) {
      MemoryNeed fewer = need.withSlicesAtOnce(slices);
      if (fewer.total() <= figures.free() - reservations) {
        return new Admission.Admitted(fewer);
      }
    }
    MemoryNeed least = need.withSlicesAtOnce(1);
    String shortage = shortage(dataset, least, figures);
    long couldBeFree = Math.min(figures.limit(), figures.free() + reservations);
    if (mayRefuse && (reserved.isEmpty() || least.total() > couldBeFree)) {
      return new Admission.Refused(shortage);
    }
    return new Admission.Queued(
        String.format(
            "%s; %d load%s in flight reserved %s: it waits for them (at most %s)",
            shortage,
            reserved.size(),
            reserved.size() == 1 ? "" : "s",
            Sizes.readable(reservations),
            duration(waitTimeout)));
  }

  /** A duration as the configuration writes it: 10m, 30s, 200ms. */
  private static String duration(Duration duration) {
    if (duration.toMillis() % 60_000 == 0 && !duration.isZero()) {
      return duration.toMinutes() + "m";
    }
    if (duration.toMillis() % 1_000 == 0) {
      return duration.toSeconds() + "s";
    }
    return duration.toMillis() + "ms";
  }

  private record Waiting(String dataset, MemoryNeed need, String reason) {}

  /** What a load needs and what each node has free, in bytes and as people read them. */
  static String shortage(String dataset, MemoryNeed need, MemoryFigures figures) {
    String each =
        figures.nodes().entrySet().stream()
            .sorted(Map.Entry.comparingByKey())
            .map(
                node ->
                    String.format(
                        "%s %s free of its %s memory limit",
                        node.getKey(),
                        Sizes.exactly(node.getValue().free()),
                        Sizes.readable(node.getValue().limit())))
            .collect(Collectors.joining(", "));
    int count = figures.nodes().size();
    return String.format(
        "Dataset '%s' needs at least %s of Arrow memory to load: %s held once loaded (%,d rows"
            + " of its columns' fixed-size values and offsets, from the table's metadata;"
            + " strings' bytes come on top) and %s while %d slice%s decode%s%s (each 3 times a"
            + " slice of about %s and a batch of %s); the %d data node%s up ha%s %s free: %s"
            + " (floe.memory.limit, FLOE_MEMORY_LIMIT). Drop datasets, load fewer columns or"
            + " rows, or add nodes or memory",
        dataset,
        Sizes.exactly(need.total()),
        Sizes.readable(need.bytes()),
        need.rows(),
        Sizes.readable(need.transientBytes()),
        need.slicesAtOnce(),
        need.slicesAtOnce() == 1 ? "" : "s",
        need.slicesAtOnce() == 1 ? "s" : "",
        need.copies() == 1 ? "" : String.format(", %d copies of each", need.copies()),
        Sizes.readable(need.sliceBytes()),
        Sizes.readable(need.batchBytes()),
        count,
        count == 1 ? "" : "s",
        count == 1 ? "s" : "ve",
        Sizes.exactly(figures.free()),
        each);
  }
}
