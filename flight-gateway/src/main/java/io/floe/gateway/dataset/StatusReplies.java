package io.floe.gateway.dataset;

import io.floe.dataset.DatasetState;
import io.floe.dataset.DatasetStatus;
import io.floe.dataset.Failure;
import io.floe.dataset.RefreshReport;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.ErrorReply;
import io.floe.protocol.RefreshReply;
import io.floe.tenant.Owner;

/** A dataset entity's status as the wire's {@link DatasetStatusReply}. */
final class StatusReplies {
  private StatusReplies() {}

  static DatasetStatusReply of(DatasetStatus status) {
    return new DatasetStatusReply(
        status.name(),
        state(status.state()),
        status.source(),
        status.slicesLoaded(),
        status.slicesTotal(),
        status.rows(),
        status.bytes(),
        status.snapshotId(),
        status.secondsToReady(),
        status.decoders(),
        refresh(status.refresh()),
        status.retained().stream()
            .map(
                layout ->
                    new DatasetStatusReply.RetainedLayout(
                        layout.snapshotId(),
                        layout.fingerprint(),
                        layout.slices(),
                        layout.rows(),
                        layout.heldBy()))
            .toList(),
        error(status.failure()),
        false,
        false,
        // A dataset loaded before owners were kept is the default tenant's (Owner.LEGACY).
        status.state() == DatasetState.ABSENT ? null : Owner.orLegacy(status.owner()),
        status.replicas());
  }

  /** A switch, not valueOf: a state added to the entity fails the build until the wire has it. */
  private static DatasetStatusReply.State state(DatasetState state) {
    return switch (state) {
      case ABSENT -> DatasetStatusReply.State.ABSENT;
      case PLANNING -> DatasetStatusReply.State.PLANNING;
      case LOADING -> DatasetStatusReply.State.LOADING;
      case READY -> DatasetStatusReply.State.READY;
      case DEGRADED -> DatasetStatusReply.State.DEGRADED;
      case FAILED -> DatasetStatusReply.State.FAILED;
    };
  }

  private static RefreshReply refresh(RefreshReport report) {
    if (report == null) {
      return null;
    }
    return new RefreshReply(
        report.state(),
        report.fromSnapshot(),
        report.toSnapshot(),
        report.kept(),
        report.loaded(),
        report.freed(),
        report.seconds(),
        error(report.failure()));
  }

  private static ErrorReply error(Failure failure) {
    return failure == null ? null : new ErrorReply(failure.kind().name(), failure.message());
  }
}
