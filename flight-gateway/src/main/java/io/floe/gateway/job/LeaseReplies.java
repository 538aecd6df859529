package io.floe.gateway.job;

import io.floe.job.entity.JobEntity;
import io.floe.protocol.LeaseReply;

/** A job entity's answer to a lease as the wire's {@link LeaseReply}. */
final class LeaseReplies {
  private LeaseReplies() {}

  /** {@code reply} is not Refused: the entity's refusals are thrown before (JobQueries). */
  static LeaseReply of(long epoch, JobEntity.LeaseReply reply) {
    if (reply instanceof JobEntity.LeaseReply.Leased leased) {
      return new LeaseReply.Leased(leased.lease(), epoch, leased.batch(), leased.rows());
    }
    if (reply instanceof JobEntity.LeaseReply.Wait wait) {
      return new LeaseReply.Wait(wait.retryMillis());
    }
    if (reply instanceof JobEntity.LeaseReply.Done) {
      return new LeaseReply.Done();
    }
    throw new IllegalStateException("A refused lease reached the answer: " + reply);
  }
}
