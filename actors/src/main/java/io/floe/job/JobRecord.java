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

  /** An epoch's acknowledged batches as the words of a bit set. */
  public record EpochAcks(long epoch, long[] acknowledged) implements CborSerializable {}
}
