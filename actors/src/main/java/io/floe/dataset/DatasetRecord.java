package io.floe.dataset;

import io.floe.serialization.CborSerializable;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Owner;
import java.util.List;
import java.util.Map;

/**
 * What survives a dataset entity's node: the spec, the generation its slice ids carry, the snapshot
 * it serves, the older snapshots it keeps for jobs and which jobs hold which layouts, and the
 * slices it was about to free. Replicated in Distributed Data so a dataset entity restarted
 * elsewhere re-plans the same slices (planning is deterministic for a pinned snapshot), gathers
 * them again, and frees what it was freeing.
 *
 * @param retainedSnapshots older snapshots whose layouts jobs still read
 * @param holders job id to the layout fingerprints the job reads
 * @param retiring slices of a replaced layout that no layout kept uses any more
 * @param owner who loaded it; null in a record written before owners were kept (see {@link
 *     Owner#LEGACY})
 */
public record DatasetRecord(
    DatasetSpec spec,
    long generation,
    long snapshotId,
    List<Long> retainedSnapshots,
    Map<String, List<String>> holders,
    List<String> retiring,
    Owner owner)
    implements CborSerializable {
  public DatasetRecord {
    retainedSnapshots = retainedSnapshots == null ? List.of() : List.copyOf(retainedSnapshots);
    holders = holders == null ? Map.of() : Map.copyOf(holders);
    retiring = retiring == null ? List.of() : List.copyOf(retiring);
  }

  /** The spec as a recovering entity plans it: pinned to the snapshot it serves. */
  public DatasetSpec pinnedSpec() {
    return snapshotId < 0 ? spec : spec.withSnapshotId(snapshotId);
  }
}
