package io.floe.job;

import io.floe.serialization.CborSerializable;
import java.util.List;

/** A registered job as clients see it through {@code job_status}. */
public record JobStatus(
    JobSpec spec,
    PinnedLayout layout,
    long batchesPerEpoch,
    long rowsLeased,
    long rowsAcknowledged,
    long rowsReissued,
    int leasesActive,
    List<EpochProgress> epochs)
    implements CborSerializable {
  public JobStatus {
    epochs = List.copyOf(epochs);
  }
}
