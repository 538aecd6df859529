package io.floe.job;

import io.floe.dataset.Failure;
import io.floe.dataset.FailureKind;
import io.floe.serialization.CborSerializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;

/**
 * One training job, placed by cluster sharding under its id. It holds the job's spec and the layout
 * it was registered against (so that every node plans the job's reads alike), and in dynamic mode
 * the lease books of its recent epochs. Deterministic reads need nothing else from it: their order
 * is a pure function of the spec, the layout and the epoch.
 *
 * <p>Its state lives in memory. If its node goes away the entity starts again empty elsewhere; the
 * clients register the job again with the same spec (they keep it) and go on. Dynamic epochs in
 * progress at that moment lose their lease books.
 */
public final class JobEntity extends AbstractBehavior<JobEntity.Command> {
  public static final org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey<Command>
      TYPE_KEY =
          org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey.create(
              Command.class, "floe-job");

  /** Dynamic epochs kept per job; older ones are forgotten. */
  static final int EPOCHS_KEPT = 8;

  /** Messages a job entity takes. */
  public sealed interface Command extends CborSerializable {}

  /** Register (idempotent for an equal spec and layout). */
  public record Register(JobSpec spec, PinnedLayout layout, ActorRef<JobReply> replyTo)
      implements Command {}

  public record GetJob(ActorRef<JobReply> replyTo) implements Command {}

  public record DropJob(ActorRef<JobReply> replyTo) implements Command {}

  public record Lease(long epoch, String worker, ActorRef<LeaseReply> replyTo) implements Command {}

  public record Ack(long epoch, String lease, String worker, ActorRef<AckReply> replyTo)
      implements Command {}

  public record Stop() implements Command {}

  /** A job's status, or why the request failed. */
  public record JobReply(JobStatus status, Failure failure) implements CborSerializable {}

  /**
   * A lease of global batch {@code batch}; or {@code done}; or neither: ask again after {@code
   * retryMillis}.
   */
  public record LeaseReply(
      String lease, long batch, long rows, long retryMillis, boolean done, Failure failure)
      implements CborSerializable {}

  /** {@code acknowledged}, {@code expired} or {@code duplicate}; or why the ack failed. */
  public record AckReply(String outcome, Failure failure) implements CborSerializable {}

  public static void init(ActorSystem<?> system) {
    ClusterSharding.get(system)
        .init(
            Entity.of(TYPE_KEY, ctx -> create(ctx.getEntityId()))
                .withStopMessage(new Stop())
                // A job's state is in memory: an idle job must not be passivated away.
                .withSettings(ClusterShardingSettings.create(system).withNoPassivationStrategy()));
  }

  static Behavior<Command> create(String jobId) {
    return Behaviors.setup(ctx -> new JobEntity(ctx, jobId));
  }

  private final String jobId;
  private JobSpec spec;
  private PinnedLayout layout;
  private JobCounters counters = new JobCounters();
  private final TreeMap<Long, EpochLeases> epochs = new TreeMap<>();

  private JobEntity(ActorContext<Command> ctx, String jobId) {
    super(ctx);
    this.jobId = jobId;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Register.class, this::onRegister)
        .onMessage(GetJob.class, this::onGet)
        .onMessage(DropJob.class, this::onDrop)
        .onMessage(Lease.class, this::onLease)
        .onMessage(Ack.class, this::onAck)
        .onMessage(Stop.class, stop -> Behaviors.stopped())
        .build();
  }

  private Behavior<Command> onRegister(Register register) {
    if (spec == null) {
      spec = register.spec();
      layout = register.layout();
      counters = new JobCounters();
      epochs.clear();
      getContext().getLog().info("Job '{}' registered on dataset '{}'", jobId, spec.dataset());
    } else if (!spec.equals(register.spec()) || !layout.equals(register.layout())) {
      register
          .replyTo()
          .tell(
              new JobReply(
                  null,
                  new Failure(
                      FailureKind.ALREADY_EXISTS,
                      String.format(
                          "Job '%s' is registered with other settings (%s on layout %s); drop it"
                              + " first or use another job id",
                          jobId, describe(spec), layout.fingerprint()))));
      return this;
    }
    register.replyTo().tell(new JobReply(status(), null));
    return this;
  }

  private static String describe(JobSpec spec) {
    return String.format(
        "dataset=%s, mode=%s, seed=%d, shuffle=%s, columns=%s, batch_rows=%d, tail=%s,"
            + " block_rows=%d, window_blocks=%d, lease_timeout_ms=%d",
        spec.dataset(),
        spec.mode().wireName(),
        spec.seed(),
        spec.shuffle(),
        spec.columns(),
        spec.batchRows(),
        spec.tail().wireName(),
        spec.blockRows(),
        spec.windowBlocks(),
        spec.leaseTimeoutMillis());
  }

  private Behavior<Command> onGet(GetJob get) {
    get.replyTo().tell(spec == null ? new JobReply(null, unknown()) : new JobReply(status(), null));
    return this;
  }

  private Behavior<Command> onDrop(DropJob drop) {
    if (spec == null) {
      drop.replyTo().tell(new JobReply(null, unknown()));
      return this;
    }
    drop.replyTo().tell(new JobReply(status(), null));
    getContext().getLog().info("Job '{}' dropped", jobId);
    return Behaviors.stopped();
  }

  private Behavior<Command> onLease(Lease lease) {
    Failure refused = checkDynamic(lease.epoch());
    if (refused != null) {
      lease.replyTo().tell(new LeaseReply(null, -1, 0, 0, false, refused));
      return this;
    }
    EpochLeases.Grant grant = book(lease.epoch()).lease(lease.worker(), now());
    lease
        .replyTo()
        .tell(
            new LeaseReply(
                grant.lease(),
                grant.batch(),
                grant.lease() == null ? 0 : spec.batchRows(),
                grant.retryMillis(),
                grant.done(),
                null));
    return this;
  }

  private Behavior<Command> onAck(Ack ack) {
    Failure refused = checkDynamic(ack.epoch());
    if (refused != null) {
      ack.replyTo().tell(new AckReply(null, refused));
      return this;
    }
    EpochLeases.AckOutcome outcome = book(ack.epoch()).ack(ack.lease(), now());
    if (outcome == EpochLeases.AckOutcome.UNKNOWN) {
      ack.replyTo()
          .tell(
              new AckReply(
                  null,
                  new Failure(
                      FailureKind.NOT_FOUND,
                      String.format(
                          "Job '%s' issued no lease '%s' in epoch %d",
                          jobId, ack.lease(), ack.epoch()))));
    } else {
      ack.replyTo().tell(new AckReply(outcome.name().toLowerCase(java.util.Locale.ROOT), null));
    }
    return this;
  }

  private Failure checkDynamic(long epoch) {
    if (spec == null) {
      return unknown();
    }
    if (spec.mode() != JobMode.DYNAMIC) {
      return new Failure(
          FailureKind.INVALID_ARGUMENT,
          "Job '" + jobId + "' is deterministic; leases are for dynamic jobs");
    }
    if (epoch < 0) {
      return new Failure(FailureKind.INVALID_ARGUMENT, "Invalid epoch: " + epoch);
    }
    if (!epochs.isEmpty() && epoch < epochs.firstKey() && epochs.size() >= EPOCHS_KEPT) {
      return new Failure(
          FailureKind.INVALID_ARGUMENT,
          String.format(
              "Epoch %d of job '%s' is too old; it keeps epochs %d and later",
              epoch, jobId, epochs.firstKey()));
    }
    return null;
  }

  private EpochLeases book(long epoch) {
    EpochLeases book = epochs.get(epoch);
    if (book == null) {
      EpochShape shape = new EpochShape(layout.rows(), spec.batchRows(), spec.tail());
      book = new EpochLeases(epoch, shape, spec.leaseTimeoutMillis(), counters);
      epochs.put(epoch, book);
      while (epochs.size() > EPOCHS_KEPT) {
        epochs.pollFirstEntry();
      }
    }
    return book;
  }

  private Failure unknown() {
    return new Failure(
        FailureKind.NOT_FOUND, "Unknown job '" + jobId + "': register it first (register_job)");
  }

  private JobStatus status() {
    long now = now();
    List<EpochProgress> progress = new ArrayList<>();
    int active = 0;
    for (Map.Entry<Long, EpochLeases> entry : epochs.entrySet()) {
      entry.getValue().expire(now);
      progress.add(entry.getValue().progress());
      active += entry.getValue().activeLeases();
    }
    return new JobStatus(
        spec,
        layout,
        new EpochShape(layout.rows(), spec.batchRows(), spec.tail()).batches(),
        counters.rowsLeased(),
        counters.rowsAcknowledged(),
        counters.rowsReissued(),
        active,
        progress);
  }

  private static long now() {
    return System.currentTimeMillis();
  }
}
