package io.floe.gateway.job;

import io.floe.job.JobStatus;
import io.floe.protocol.JobStatusReply;
import io.floe.tenant.Owner;

/** A job entity's status as the wire's {@link JobStatusReply}. */
final class JobStatusReplies {
  private JobStatusReplies() {}

  static JobStatusReply of(JobStatus status) {
    return new JobStatusReply(
        status.spec(),
        status.epoch(),
        status.layout().rows(),
        status.layout().snapshotId(),
        status.layout().fingerprint(),
        status.batchesPerEpoch(),
        status.layouts().stream()
            .map(
                at ->
                    new JobStatusReply.LayoutRun(
                        at.fromEpoch(),
                        at.layout().fingerprint(),
                        at.layout().snapshotId(),
                        at.layout().rows()))
            .toList(),
        new JobStatusReply.Counters(
            status.rowsLeased(),
            status.rowsAcknowledged(),
            status.rowsReissued(),
            status.leasesActive()),
        status.epochs(),
        false,
        // A job registered before owners were kept is the default tenant's (Owner.LEGACY).
        Owner.orLegacy(status.owner()));
  }
}
