package io.floe.job.entity;

import io.floe.dataset.DatasetEntity;
import io.floe.dataset.Failure;
import io.floe.error.ErrorKind;
import io.floe.job.JobRecord;
import io.floe.job.entity.JobEntity.Command;
import java.util.List;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityContext;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;

/**
 * What both stages of one job entity work with: its id, its actor, the stash that holds requests
 * while an epoch's layout is decided, timers, the job directory, and this node's live jobs.
 */
final class JobContext {
  private final String jobId;
  private final ActorContext<Command> actor;
  private final EntityContext<Command> entity;
  private final StashBuffer<Command> stash;
  private final TimerScheduler<Command> timers;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, JobRecord>> replicator;
  private final SelfUniqueAddress node;
  private final LiveJobs live;
  private long registrations;

  JobContext(
      ActorContext<Command> actor,
      EntityContext<Command> entity,
      StashBuffer<Command> stash,
      TimerScheduler<Command> timers,
      ReplicatorMessageAdapter<Command, LWWMap<String, JobRecord>> replicator) {
    this.jobId = entity.getEntityId();
    this.actor = actor;
    this.entity = entity;
    this.stash = stash;
    this.timers = timers;
    this.replicator = replicator;
    this.node = DistributedData.get(actor.getSystem()).selfUniqueAddress();
    this.live =
        LiveJobs.get(org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(actor.getSystem()));
  }

  String jobId() {
    return jobId;
  }

  ActorContext<Command> actor() {
    return actor;
  }

  StashBuffer<Command> stash() {
    return stash;
  }

  TimerScheduler<Command> timers() {
    return timers;
  }

  ReplicatorMessageAdapter<Command, LWWMap<String, JobRecord>> replicator() {
    return replicator;
  }

  LiveJobs live() {
    return live;
  }

  EntityRef<DatasetEntity.Command> dataset(String name) {
    return ClusterSharding.get(actor.getSystem()).entityRefFor(DatasetEntity.TYPE_KEY, name);
  }

  /** Writes the record at a majority; {@code replies} go out once it is there (RecordWritten). */
  void writeRecord(JobRecord record, List<Runnable> replies) {
    JobEntity.DIRECTORY.write(
        replicator,
        node,
        jobId,
        held -> record.mergedWith(held),
        written -> new JobEntity.RecordWritten(written, replies));
  }

  /** Removes the record, so the job does not come back. */
  void forgetRecord() {
    JobEntity.DIRECTORY.remove(
        replicator, node, jobId, written -> new JobEntity.RecordWritten(written, List.of()));
  }

  /** A number for a new registration of this job id, unique in this incarnation. */
  long nextRegistration() {
    return ++registrations;
  }

  Failure unknown() {
    return new Failure(
        ErrorKind.JOB_NOT_FOUND, "Unknown job '" + jobId + "': register it first (register_job)");
  }

  /** An entity without a job leaves, so that asking for unknown ids does not pile them up. */
  void leave() {
    entity.getShard().tell(new ClusterSharding.Passivate<>(actor.getSelf()));
  }
}
