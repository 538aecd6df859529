package io.floe.job;

import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Dynamic mode's bookkeeping for one epoch: which global batches wait to be handed out, which are
 * leased to whom until when, and which are acknowledged. A lease that is not acknowledged in time
 * goes back to the front of the queue. The first acknowledgement of a batch counts; so each batch
 * is acknowledged exactly once per epoch, whichever workers came and went. Not thread-safe: it
 * lives inside one job entity.
 */
public final class EpochLeases {
  /**
   * How many of the latest acknowledgements an epoch remembers by lease id, also in the job's
   * record: a worker that sends an acknowledgement again (its answer was lost, or the entity moved
   * after recording it) is told ACKNOWLEDGED, not DUPLICATE. Only acknowledgements in flight at
   * such a moment come back, a handful per worker.
   */
  public static final int RECENT_ACKS = 64;

  /** How long a worker that finds every batch leased waits before asking again, at most. */
  public static final long MAX_RETRY_MILLIS = 200;

  public enum AckOutcome {
    ACKNOWLEDGED,
    EXPIRED,
    DUPLICATE,
    UNKNOWN
  }

  /** The outcome of a lease request: a lease, or nothing yet (wait), or the epoch is done. */
  public record Grant(String lease, long batch, long retryMillis, boolean done) {}

  private record Lease(long batch, String worker, long deadline) {}

  private final long epoch;
  private final EpochShape shape;
  private final long timeoutMillis;
  private final Deque<Long> pending = new ArrayDeque<>();

  /** The batch's current lease id, while it is out. */
  private final Map<Long, String> leasedBatch = new HashMap<>();

  private final Map<String, Lease> active = new HashMap<>();
  private final int[] attempts;
  private final BitSet acknowledged = new BitSet();
  private final java.util.LinkedHashSet<String> recentAcks = new java.util.LinkedHashSet<>();
  private final JobCounters counters;

  /** Leases issued before this book was restored are unknown to it; their ids are accepted. */
  private final boolean restored;

  /**
   * This book's mark in the ids of the leases it issues. A book restored after its entity moved
   * counts attempts from 1 again; without the mark, its first lease of a batch would carry the id
   * of the previous book's lease of that batch, and both holders' acknowledgements would count.
   */
  private final String book =
      Integer.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextInt());

  public EpochLeases(long epoch, EpochShape shape, long timeoutMillis, JobCounters counters) {
    this(epoch, shape, timeoutMillis, counters, null, java.util.List.of());
  }

  /**
   * A book restored from a record: {@code acknowledgedWords} are its acknowledged batches, {@code
   * recent} the lease ids of the latest acknowledgements.
   */
  public EpochLeases(
      long epoch,
      EpochShape shape,
      long timeoutMillis,
      JobCounters counters,
      long[] acknowledgedWords,
      java.util.List<String> recent) {
    this.epoch = epoch;
    this.shape = shape;
    this.timeoutMillis = timeoutMillis;
    this.counters = counters;
    this.restored = acknowledgedWords != null;
    if (restored) {
      acknowledged.or(BitSet.valueOf(acknowledgedWords));
      recent.forEach(this::remember);
      counters.acknowledged((long) acknowledged.cardinality() * shape.batchRows());
    }
    int batches = Math.toIntExact(shape.batches());
    this.attempts = new int[batches];
    for (long k = 0; k < batches; k++) {
      if (!acknowledged.get((int) k)) {
        pending.add(k);
      }
    }
  }

  public long[] acknowledgedWords() {
    return acknowledged.toLongArray();
  }

  /** The lease ids of the latest acknowledgements, oldest first. */
  public java.util.List<String> recentAcks() {
    return java.util.List.copyOf(recentAcks);
  }

  private void remember(String leaseId) {
    recentAcks.add(leaseId);
    if (recentAcks.size() > RECENT_ACKS) {
      recentAcks.remove(recentAcks.iterator().next());
    }
  }

  public Grant lease(String worker, long now) {
    expire(now);
    Long batch = pending.pollFirst();
    if (batch != null) {
      int attempt = ++attempts[batch.intValue()];
      String id = epoch + ":" + batch + ":" + attempt + ":" + book;
      active.put(id, new Lease(batch, worker, now + timeoutMillis));
      leasedBatch.put(batch, id);
      counters.leased(shape.batchRows());
      return new Grant(id, batch, 0, false);
    }
    if (active.isEmpty()) {
      return new Grant(null, -1, 0, true);
    }
    long soonest = active.values().stream().mapToLong(Lease::deadline).min().orElse(now);
    return new Grant(null, -1, Math.max(1, Math.min(MAX_RETRY_MILLIS, soonest - now)), false);
  }

  public AckOutcome ack(String leaseId, long now) {
    expire(now);
    long batch = batchOf(leaseId);
    if (batch < 0) {
      return AckOutcome.UNKNOWN;
    }
    if (acknowledged.get((int) batch)) {
      // The same acknowledgement again is answered as it was the first time.
      return recentAcks.contains(leaseId) ? AckOutcome.ACKNOWLEDGED : AckOutcome.DUPLICATE;
    }
    String current = leasedBatch.get(batch);
    if (leaseId.equals(current)) {
      active.remove(leaseId);
      leasedBatch.remove(batch);
    } else if (current != null) {
      // Timed out and handed to another worker, whose acknowledgement will count.
      return AckOutcome.EXPIRED;
    } else {
      // Timed out but not handed out again yet: this acknowledgement still counts.
      pending.remove(batch);
    }
    acknowledged.set((int) batch);
    remember(leaseId);
    counters.acknowledged(shape.batchRows());
    return AckOutcome.ACKNOWLEDGED;
  }

  /** Puts leases past their deadline back at the front of the queue. */
  public void expire(long now) {
    for (Iterator<Map.Entry<String, Lease>> it = active.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Lease> entry = it.next();
      Lease lease = entry.getValue();
      if (lease.deadline() <= now) {
        it.remove();
        leasedBatch.remove(lease.batch());
        pending.addFirst(lease.batch());
        counters.reissued(shape.batchRows());
      }
    }
  }

  /** The batch a lease id names, if this epoch issued it; else -1. */
  private long batchOf(String leaseId) {
    String[] parts = leaseId.split(":", -1);
    if (parts.length != 4) {
      return -1;
    }
    try {
      long leaseEpoch = Long.parseLong(parts[0]);
      long batch = Long.parseLong(parts[1]);
      int attempt = Integer.parseInt(parts[2]);
      boolean ours = book.equals(parts[3]);
      boolean issued =
          leaseEpoch == epoch
              && 0 <= batch
              && batch < attempts.length
              && 1 <= attempt
              && (ours ? attempt <= attempts[(int) batch] : restored);
      return issued ? batch : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  public EpochProgress progress() {
    return new EpochProgress(
        epoch, attempts.length, pending.size(), active.size(), acknowledged.cardinality());
  }

  public int activeLeases() {
    return active.size();
  }
}
