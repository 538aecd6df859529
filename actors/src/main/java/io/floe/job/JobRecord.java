package io.floe.job;

import io.floe.serialization.CborSerializable;
import java.util.List;

/**
 * What outlives a job entity's node: its spec, the layout it is pinned to, and for each dynamic
 * epoch it keeps, the batches acknowledged so far. Leases in flight are not kept; after a move
 * their batches are handed out again unless their acknowledgement arrives first.
 */
public record JobRecord(JobSpec spec, PinnedLayout layout, List<EpochAcks> epochs)
    implements CborSerializable {
  public JobRecord {
    epochs = List.copyOf(epochs);
  }

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
    int drop = Math.max(0, merged.size() - JobEntity.EPOCHS_KEPT);
    return new JobRecord(spec, layout, merged.subList(drop, merged.size()));
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
