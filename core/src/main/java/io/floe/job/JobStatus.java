package io.floe.job;

import io.floe.serialization.CborSerializable;
import io.floe.tenant.Owner;
import java.util.List;

/**
 * A registered job as clients see it through {@code job_status}.
 *
 * @param epoch the epoch {@code layout} and {@code batchesPerEpoch} are of: the one asked about,
 *     else the latest begun (or 0)
 * @param layout the layout that epoch reads
 * @param layouts every layout the job reads or read, by the epoch it starts at
 * @param owner the caller that registered it; null for a job registered before owners were kept
 */
public record JobStatus(
    JobSpec spec,
    long epoch,
    PinnedLayout layout,
    List<JobRecord.EpochLayout> layouts,
    long batchesPerEpoch,
    long rowsLeased,
    long rowsAcknowledged,
    long rowsReissued,
    int leasesActive,
    List<EpochProgress> epochs,
    Owner owner)
    implements CborSerializable {
  public JobStatus {
    epochs = List.copyOf(epochs);
    layouts = List.copyOf(layouts);
  }
}
