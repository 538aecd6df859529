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
        // Requests that waited for a layout when the job was dropped: refused now.
        .onMessage(JobEntity.NewestLayout.class, newest -> job.stash().unstashAll(this))
        .onMessage(
            JobEntity.RecordWritten.class,
            written -> {
              // Acknowledgements written just before the drop: their batches were counted.
              written.replies().forEach(Runnable::run);
              return this;
            })
        .onMessage(JobEntity.Stop.class, stop -> Behaviors.stopped())
        .onMessage(Command.class, ignored -> this)
        .onSignal(PostStop.class, stopped -> this)
        .build();
  }

  private Behavior<Command> leave() {
    job.leave();
    return this;
  }
}
