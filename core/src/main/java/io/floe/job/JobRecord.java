package io.floe.job;

import io.floe.serialization.CborSerializable;
import io.floe.tenant.Owner;
import java.util.List;

/**
 * What outlives a job entity's node: its spec, the layout it was registered on, the layout each
 * epoch reads from (epochs from {@code fromEpoch} on, until the next entry) and up to which epoch
 * that is decided, and for each dynamic epoch it keeps, the batches acknowledged so far. Leases in
 * flight are not kept; after a move their batches are handed out again unless their acknowledgement
 * arrives first.
 *
 * @param owner the caller that registered it; null in a record written before owners were kept (see
 *     {@link Owner#LEGACY})
 */
public record JobRecord(
    JobSpec spec,
    PinnedLayout layout,
    List<EpochAcks> epochs,
    List<EpochLayout> layouts,
    long boundThrough,
    Owner owner)
    implements CborSerializable {
  /** Dynamic epochs a job keeps; older ones are forgotten (the entity and merges alike). */
  public static final int EPOCHS_KEPT = 8;

  public JobRecord {
    epochs = List.copyOf(epochs);
    layouts =
        layouts == null || layouts.isEmpty()
            ? List.of(new EpochLayout(0, layout))
            : List.copyOf(layouts);
  }

  /** A record with no epoch decided yet and no owner, as written before owners were kept. */
  public JobRecord(JobSpec spec, PinnedLayout layout, List<EpochAcks> epochs) {
    this(spec, layout, epochs, List.of(), -1, null);
  }

  /** Epochs from {@code fromEpoch} on read {@code layout}, until a later entry. */
  public record EpochLayout(long fromEpoch, PinnedLayout layout) implements CborSerializable {}

  /**
   * This record with the acknowledgements of {@code other} added, when both are of the same job
   * settings: acknowledged batches are never taken back, even by an entity that started from a
   * stale copy of the record.
   */
  public JobRecord mergedWith(JobRecord other) {
    if (other == null || !other.spec().equals(spec) || !other.layout().equals(layout)) {
      return this;
    }
    java.util.Map<Long, java.util.BitSet> acked = new java.util.TreeMap<>();
    java.util.Map<Long, java.util.LinkedHashSet<String>> recent = new java.util.HashMap<>();
    for (JobRecord record : List.of(this, other)) {
      for (EpochAcks acks : record.epochs()) {
        acked
            .computeIfAbsent(acks.epoch(), e -> new java.util.BitSet())
            .or(java.util.BitSet.valueOf(acks.acknowledged()));
        recent
            .computeIfAbsent(acks.epoch(), e -> new java.util.LinkedHashSet<>())
            .addAll(acks.recentAcks());
      }
    }
    List<EpochAcks> merged = new java.util.ArrayList<>();
    acked.forEach(
        (epoch, bits) -> {
          List<String> leases = List.copyOf(recent.get(epoch));
          int from = Math.max(0, leases.size() - EpochLeases.RECENT_ACKS);
          merged.add(new EpochAcks(epoch, bits.toLongArray(), leases.subList(from, leases.size())));
        });
    // Keep the newest epochs, as the entity does.
    int drop = Math.max(0, merged.size() - EPOCHS_KEPT);
    // An epoch's layout never changes once decided: take the decisions of both.
    java.util.TreeMap<Long, PinnedLayout> bound = new java.util.TreeMap<>();
    other.layouts().forEach(l -> bound.put(l.fromEpoch(), l.layout()));
    layouts.forEach(l -> bound.put(l.fromEpoch(), l.layout()));
    List<EpochLayout> mergedLayouts = new java.util.ArrayList<>();
    bound.forEach((epoch, layout) -> mergedLayouts.add(new EpochLayout(epoch, layout)));
    return new JobRecord(
        spec,
        layout,
        merged.subList(drop, merged.size()),
        mergedLayouts,
        Math.max(boundThrough, other.boundThrough()),
        owner != null ? owner : other.owner());
  }

  /**
   * An epoch's acknowledged batches as the words of a bit set, and the lease ids of its latest
   * acknowledgements (at most {@link EpochLeases#RECENT_ACKS}), so that one sent again after a move
   * is recognised.
   */
  public record EpochAcks(long epoch, long[] acknowledged, List<String> recentAcks)
      implements CborSerializable {
    public EpochAcks {
      recentAcks = recentAcks == null ? List.of() : List.copyOf(recentAcks);
    }
  }
}
