package io.floe.job.entity;

import io.floe.job.entity.JobEntity.AckReply;
import io.floe.job.entity.JobEntity.Command;
import io.floe.job.entity.JobEntity.JobReply;
import io.floe.job.entity.JobEntity.LeaseReply;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * An id no job is registered under (never, or dropped): a registration makes it a {@link
 * RegisteredJob}; other requests are refused as JOB_NOT_FOUND, and the entity leaves its shard.
 */
final class UnregisteredJob extends AbstractBehavior<Command> {
  private final JobContext job;

  UnregisteredJob(JobContext job) {
    super(job.actor());
    this.job = job;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(JobEntity.Register.class, register -> RegisteredJob.register(job, register))
        .onMessage(
            JobEntity.GetJob.class,
            get -> {
              get.replyTo().tell(new JobReply.Refused(job.unknown()));
              return leave();
            })
        .onMessage(
            JobEntity.DropJob.class,
            drop -> {
              drop.replyTo().tell(new JobReply.Refused(job.unknown()));
              return leave();
            })
        .onMessage(
            JobEntity.Lease.class,
            lease -> {
              lease.replyTo().tell(new LeaseReply.Refused(job.unknown()));
              return this;
            })
        .onMessage(
            JobEntity.Ack.class,
            ack -> {
              ack.replyTo().tell(new AckReply.Refused(job.unknown()));
              return this;
            })
        .onMessage(JobEntity.Stop.class, stop -> Behaviors.stopped())
        // The layout and record answers of a dropped registration (its waiting requests and
        // acknowledgements were answered when it was dropped).
        .onMessage(Command.class, ignored -> this)
        .onSignal(PostStop.class, stopped -> this)
        .build();
  }

  private Behavior<Command> leave() {
    job.leave();
    return this;
  }
}
