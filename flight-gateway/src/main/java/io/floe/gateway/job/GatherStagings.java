package io.floe.gateway.job;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The working arrays of job record batches being planned and gathered, kept for reuse by all of a
 * node's job streams: a stream holds a set only from planning a record batch until it is gathered,
 * so what the node keeps grows with the gathering threads, not with the streams (a set is about 2
 * MB of heap at 32,768 rows, and a node may serve hundreds of streams, most of them waiting for
 * their readers). At most {@code keep} sets are kept; more are left to the collector.
 */
final class GatherStagings {
  /**
   * One record batch's working arrays: where its rows are in the gather's sources and where each
   * goes in its batch's share, for up to {@code room} rows, and the gather's own scratch.
   */
  static final class Staging {
    final int room;
    final int[] source;
    final int[] indexIn;
    final int[] places;
    final GatherScratch scratch = GatherRuns.newScratch();

    Staging(int room) {
      this.room = room;
      source = new int[room];
      indexIn = new int[room];
      places = new int[room];
    }
  }

  private final int keep;
  private final AtomicInteger kept = new AtomicInteger();
  private final Map<Integer, ConcurrentLinkedDeque<Staging>> spare = new ConcurrentHashMap<>();

  GatherStagings(int keep) {
    this.keep = keep;
  }

  /** Working arrays for {@code room} rows: kept ones if there are, else new ones. */
  Staging take(int room) {
    ConcurrentLinkedDeque<Staging> sized = spare.get(room);
    Staging staging = sized == null ? null : sized.poll();
    if (staging == null) {
      return new Staging(room);
    }
    kept.decrementAndGet();
    return staging;
  }

  /** Gives working arrays back once their record batch is gathered (or will not be). */
  void give(Staging staging) {
    if (kept.incrementAndGet() > keep) {
      kept.decrementAndGet();
      return;
    }
    spare.computeIfAbsent(staging.room, room -> new ConcurrentLinkedDeque<>()).push(staging);
  }

  /** How many sets are kept now. */
  int kept() {
    return kept.get();
  }
}
