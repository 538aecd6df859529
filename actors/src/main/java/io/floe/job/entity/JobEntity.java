package io.floe.job.entity;

import io.floe.dataset.DatasetEntity;
import io.floe.dataset.Failure;
import io.floe.ddata.RecordDirectory;
import io.floe.ddata.RecordRecovery;
import io.floe.job.JobRecord;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.serialization.CborSerializable;
import io.floe.tenant.Owner;
import io.floe.tenant.Requester;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityContext;

/**
 * One training job, placed by cluster sharding under its id. It holds the job's spec, the layout
 * each epoch reads (so that every node plans the job's reads alike), and in dynamic mode the lease
 * books of its recent epochs. Deterministic reads need nothing else from it: their order is a pure
 * function of the spec, the epoch's layout and the epoch.
 *
 * <p>Layouts: an epoch reads the layout the job was registered on until the dataset is refreshed.
 * The first request for an epoch not begun yet asks the dataset for its newest layout, and that
 * epoch and the ones after read it; an epoch once begun never changes layout. A job with {@code
 * pin_layout} stays on its first layout. The job tells the dataset which layouts it still reads
 * (its latest epoch's and the one before), and the dataset keeps them loaded until then.
 *
 * <p>Its record (spec, pinned layout, and each kept dynamic epoch's acknowledged batches) is
 * replicated in Distributed Data, and an acknowledgement is answered only once a majority holds it.
 * So when its node leaves or fails, the entity starts again where it is next asked, from the
 * record: acknowledged batches stay acknowledged, and leases that were out are handed out again
 * unless their acknowledgement arrives first.
 *
 * <p>Its two stages are behaviors of their own: {@link UnregisteredJob} and {@link RegisteredJob};
 * this class holds the messages and how the entity starts.
 */
public final class JobEntity {
  public static final org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey<Command>
      TYPE_KEY =
          org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey.create(
              Command.class, "floe-job");

  /** Every job's record (spec, pinned layouts, acknowledged batches), by job id. */
  public static final RecordDirectory<JobRecord> DIRECTORY =
      RecordDirectory.named("floe-jobs", java.time.Duration.ofSeconds(5));

  private static final int STASH_CAPACITY = 10_000;

  static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(JobEntity.class);

  /** Messages a job entity takes. */
  public sealed interface Command extends CborSerializable {}

  /**
   * Register (idempotent for an equal spec and layout), owned by {@code owner}; a job registered
   * already keeps the owner it has.
   */
  public record Register(JobSpec spec, PinnedLayout layout, Owner owner, ActorRef<JobReply> replyTo)
      implements Command {}

  /**
   * The job's status; with an epoch, that epoch's layout (an epoch not begun yet begins on the
   * dataset's newest layout).
   */
  public record GetJob(Long epoch, ActorRef<JobReply> replyTo) implements Command {
    public GetJob(ActorRef<JobReply> replyTo) {
      this(null, replyTo);
    }
  }

  /** Drop, if the requester registered the job (or is an admin). */
  public record DropJob(Requester requester, ActorRef<JobReply> replyTo) implements Command {}

  /**
   * @param request names the caller's request: the gateway asks again with the same one when an
   *     answer is late (see RepeatedAsk), and gets the lease it was granted then, not a second one
   *     that nobody would read until it timed out
   */
  public record Lease(long epoch, String worker, String request, ActorRef<LeaseReply> replyTo)
      implements Command {}

  public record Ack(long epoch, String lease, String worker, ActorRef<AckReply> replyTo)
      implements Command {}

  public record Stop() implements Command {}

  record RecordRead(JobRecord record, boolean failed, boolean local)
      implements Command, RecordRecovery.Read<JobRecord> {}

  record Flush() implements Command {}

  /** The dataset's newest layout, for the first request of {@code epoch}. */
  record NewestLayout(
      long registration, long epoch, DatasetEntity.LayoutReply reply, Throwable failure)
      implements Command {}

  record RecordWritten(RecordDirectory.Written written, List<Runnable> replies)
      implements Command {}

  /** A job's status, or why the request failed. */
  public sealed interface JobReply extends CborSerializable {
    record Found(JobStatus status) implements JobReply {}

    record Refused(Failure failure) implements JobReply {}
  }

  /** What a dynamic-mode worker gets when it asks for a batch. */
  public sealed interface LeaseReply extends CborSerializable {
    /** Global batch {@code batch} of {@code rows} rows, held as lease {@code lease}. */
    record Leased(String lease, long batch, long rows) implements LeaseReply {}

    /** Every batch is leased, some not yet acknowledged: ask again after {@code retryMillis}. */
    record Wait(long retryMillis) implements LeaseReply {}

    /** Every batch of epoch {@code epoch} is acknowledged. */
    record Done(long epoch) implements LeaseReply {}

    record Refused(Failure failure) implements LeaseReply {}
  }

  /** How an acknowledgement was taken, or why it was refused. */
  public sealed interface AckReply extends CborSerializable {
    enum Outcome {
      /** Counted now (written to a majority before this answer). */
      ACKNOWLEDGED,
      /** The lease had expired and its batch went to another worker; not counted. */
      EXPIRED,
      /** The batch was acknowledged already; not counted again. */
      DUPLICATE;

      public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
      }
    }

    record Answered(Outcome outcome) implements AckReply {}

    record Refused(Failure failure) implements AckReply {}
  }

  public static void init(ActorSystem<?> system) {
    // Start this node's replicator now: it is created lazily (see DatasetEntity.init).
    DistributedData.get(system);
    ClusterSharding.get(system)
        .init(
            Entity.of(TYPE_KEY, JobEntity::create)
                .withStopMessage(new Stop())
                // A job lives until it is dropped: an idle job must not be passivated away.
                .withSettings(ClusterShardingSettings.create(system).withNoPassivationStrategy()));
  }

  static Behavior<Command> create(EntityContext<Command> entity) {
    // Every line this entity logs carries its job (a field of JSON logs).
    return Behaviors.withMdc(
        Command.class, java.util.Map.of("job", entity.getEntityId()), setup(entity));
  }

  private static Behavior<Command> setup(EntityContext<Command> entity) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withTimers(
                timers ->
                    Behaviors.withStash(
                        STASH_CAPACITY,
                        stash ->
                            DistributedData.withReplicatorMessageAdapter(
                                (ReplicatorMessageAdapter<Command, LWWMap<String, JobRecord>>
                                        replicator) ->
                                    recover(
                                        new JobContext(ctx, entity, stash, timers, replicator))))));
  }

  /**
   * Reads the job's record (if any) before taking messages, stashing them meanwhile; then the job
   * is registered as its record says, or not at all.
   */
  private static Behavior<Command> recover(JobContext job) {
    String jobId = job.jobId();
    return RecordRecovery.recover(
        Command.class,
        job.stash(),
        job.replicator(),
        DIRECTORY,
        jobId,
        RecordRead.class,
        RecordRead::new,
        (record, unreadable) -> {
          // Operators (and the failover tests) find a job's node by this line, or by its
          // registration's; any id asked about starts an entity with no record, which is no news.
          if (record != null) {
            LOG.info("Job '{}' entity started on this node from its record", jobId);
          } else {
            LOG.debug("Job '{}' entity started on this node with no record yet", jobId);
          }
          return record != null ? RegisteredJob.recovering(job, record) : new UnregisteredJob(job);
        });
  }

  private JobEntity() {}
}
