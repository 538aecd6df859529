package io.floe.dataset;

import io.floe.serialization.CborSerializable;

/**
 * What survives a dataset entity's node: the spec, the generation its slice ids carry, and the
 * pinned snapshot. Replicated in Distributed Data so a dataset entity restarted elsewhere re-plans
 * the same slices (planning is deterministic for a pinned snapshot) and gathers them again.
 */
public record DatasetRecord(DatasetSpec spec, long generation, long snapshotId)
    implements CborSerializable {

  /** The spec as a recovering entity plans it: pinned to the snapshot first planned. */
  public DatasetSpec pinnedSpec() {
    return snapshotId < 0 ? spec : spec.withSnapshotId(snapshotId);
  }
}
