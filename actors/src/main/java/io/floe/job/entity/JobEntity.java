package io.floe.job.entity;

import io.floe.dataset.DatasetEntity;
import io.floe.dataset.DatasetLayout;
import io.floe.dataset.Failure;
import io.floe.ddata.RecordDirectory;
import io.floe.ddata.RecordRecovery;
import io.floe.job.EpochLeases;
import io.floe.job.EpochProgress;
import io.floe.job.EpochShape;
import io.floe.job.JobCounters;
import io.floe.job.JobMode;
import io.floe.job.JobRecord;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.serialization.CborSerializable;
import io.floe.table.FailureKind;
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
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
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
 */
public final class JobEntity extends AbstractBehavior<JobEntity.Command> {
  public static final org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey<Command>
      TYPE_KEY =
          org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey.create(
              Command.class, "floe-job");

  /** Every job's record (spec, pinned layouts, acknowledged batches), by job id. */
  public static final RecordDirectory<JobRecord> DIRECTORY =
      RecordDirectory.named("floe-jobs", java.time.Duration.ofSeconds(5));

  /** Dynamic epochs kept per job; older ones are forgotten. */
  static final int EPOCHS_KEPT = JobRecord.EPOCHS_KEPT;

  /** Workers whose last granted lease is remembered, to answer a request asked twice. */
  private static final int GRANTS_KEPT = 4_096;

  /** Acknowledgements are written to the record in groups, at most this often. */
  private static final java.time.Duration FLUSH_EVERY = java.time.Duration.ofMillis(25);

  private static final String FLUSH_TIMER = "flush";

  private static final int STASH_CAPACITY = 10_000;

  /** How long a new epoch waits for the dataset's newest layout before keeping the last one. */
  private static final java.time.Duration BIND_TIMEOUT = java.time.Duration.ofSeconds(10);

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(JobEntity.class);

  /** Messages a job entity takes. */
  public sealed interface Command extends CborSerializable {}

  /** Register (idempotent for an equal spec and layout). */
  public record Register(JobSpec spec, PinnedLayout layout, ActorRef<JobReply> replyTo)
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

  public record DropJob(ActorRef<JobReply> replyTo) implements Command {}

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

  private record RecordRead(JobRecord record, boolean failed, boolean local)
      implements Command, RecordRecovery.Read<JobRecord> {}

  private record Flush() implements Command {}

  /** The dataset's newest layout, for the first request of {@code epoch}. */
  private record NewestLayout(long epoch, DatasetEntity.LayoutReply reply, Throwable failure)
      implements Command {}

  private record RecordWritten(boolean ok, List<Runnable> replies) implements Command {}

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
                                    recover(ctx, entity, stash, replicator, timers)))));
  }

  /** Reads the job's record (if any) before taking messages, stashing them meanwhile. */
  private static Behavior<Command> recover(
      ActorContext<Command> ctx,
      EntityContext<Command> entity,
      StashBuffer<Command> stash,
      ReplicatorMessageAdapter<Command, LWWMap<String, JobRecord>> replicator,
      TimerScheduler<Command> timers) {
    String jobId = entity.getEntityId();
    return RecordRecovery.recover(
        Command.class,
        stash,
        replicator,
        DIRECTORY,
        jobId,
        RecordRead.class,
        RecordRead::new,
        (record, unreadable) -> {
          // Operators (and the failover tests) find a job's node by this line.
          LOG.info(
              "Job '{}' entity started on this node {}",
              jobId,
              record != null ? "from its record" : "with no record yet");
          return new JobEntity(ctx, entity, stash, replicator, timers, record);
        });
  }

  private final String jobId;
  private final EntityContext<Command> entity;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, JobRecord>> replicator;
  private final SelfUniqueAddress node;
  private final StashBuffer<Command> stash;
  private final TimerScheduler<Command> timers;
  private final LiveJobs live;
  private JobSpec spec;

  /** The layout the job was registered on; its identity with the spec. */
  private PinnedLayout layout;

  /** The layout of each epoch: epochs from a key on read its layout, until the next key. */
  private final TreeMap<Long, PinnedLayout> epochLayouts = new TreeMap<>();

  /** Epochs up to this one have begun: their layout is decided. */
  private long boundThrough = -1;

  /** An epoch whose newest layout is being asked for, or -1; its requests wait in the stash. */
  private long binding = -1;

  /** The fingerprints last told to the dataset as held. */
  private List<String> held = List.of();

  private JobCounters counters = new JobCounters();
  private final TreeMap<Long, EpochLeases> epochs = new TreeMap<>();

  /** The last lease granted to each worker, and the request it answered (newest workers kept). */
  private final Map<String, GrantedLease> lastGrants =
      new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, GrantedLease> eldest) {
          return size() > GRANTS_KEPT;
        }
      };

  private record GrantedLease(String request, long epoch, LeaseReply reply) {}

  /** Acknowledgement replies waiting for the record that holds them to reach a majority. */
  private List<Runnable> unwritten = new ArrayList<>();

  private boolean writing;

  private JobEntity(
      ActorContext<Command> ctx,
      EntityContext<Command> entity,
      StashBuffer<Command> stash,
      ReplicatorMessageAdapter<Command, LWWMap<String, JobRecord>> replicator,
      TimerScheduler<Command> timers,
      JobRecord record) {
    super(ctx);
    this.timers = timers;
    this.jobId = entity.getEntityId();
    this.entity = entity;
    this.stash = stash;
    this.replicator = replicator;
    this.node = DistributedData.get(ctx.getSystem()).selfUniqueAddress();
    this.live =
        LiveJobs.get(org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(ctx.getSystem()));
    if (record != null) {
      live.started(jobId, () -> counters);
      spec = record.spec();
      layout = record.layout();
      record.layouts().forEach(l -> epochLayouts.put(l.fromEpoch(), l.layout()));
      boundThrough = record.boundThrough();
      for (JobRecord.EpochAcks acks : record.epochs()) {
        epochs.put(
            acks.epoch(),
            new EpochLeases(
                acks.epoch(),
                shape(acks.epoch()),
                spec.leaseTimeoutMillis(),
                counters,
                acks.acknowledged(),
                acks.recentAcks()));
      }
      hold();
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Register.class, this::onRegister)
        .onMessage(GetJob.class, this::onGet)
        .onMessage(DropJob.class, this::onDrop)
        .onMessage(Lease.class, this::onLease)
        .onMessage(Ack.class, this::onAck)
        .onMessage(NewestLayout.class, this::onNewestLayout)
        .onMessage(Flush.class, flush -> onFlush())
        .onMessage(RecordWritten.class, this::onWritten)
        .onMessage(Stop.class, stop -> onStop())
        .onSignal(org.apache.pekko.actor.typed.PostStop.class, stopped -> onPostStop())
        .build();
  }

  private Behavior<Command> onRegister(Register register) {
    if (spec == null) {
      spec = register.spec();
      layout = register.layout();
      epochLayouts.clear();
      epochLayouts.put(0L, layout);
      boundThrough = -1;
      counters = new JobCounters();
      epochs.clear();
      live.started(jobId, () -> counters);
      LOG.info("Job '{}' registered on dataset '{}'", jobId, spec.dataset());
      write(List.of());
      hold();
    } else if (!spec.equals(register.spec())) {
      // The same job registered again (every rank may register, also after a refresh): it keeps
      // the layouts its epochs read.
      register
          .replyTo()
          .tell(
              new JobReply.Refused(
                  new Failure(
                      FailureKind.ALREADY_EXISTS,
                      String.format(
                          "Job '%s' is registered with other settings (%s on layout %s); drop it"
                              + " first or use another job id",
                          jobId, describe(spec), layout.fingerprint()))));
      return this;
    }
    register.replyTo().tell(new JobReply.Found(status(null)));
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
    if (spec == null) {
      get.replyTo().tell(new JobReply.Refused(unknown()));
      return passivate();
    }
    if (get.epoch() != null && mustBind(get.epoch())) {
      if (!spec.pinLayout()) {
        return askNewest(get.epoch(), get);
      }
      bind(get.epoch(), null);
    }
    get.replyTo().tell(new JobReply.Found(status(get.epoch())));
    return this;
  }

  /** Whether {@code epoch} begins now and the dataset's newest layout must be asked for. */
  private boolean mustBind(long epoch) {
    return epoch > boundThrough && epoch >= 0;
  }

  /**
   * Keeps {@code request} until {@code epoch}'s layout is decided by the dataset's newest layout;
   * it is handled again then.
   */
  private Behavior<Command> askNewest(long epoch, Command request) {
    stash.stash(request);
    if (binding < 0) {
      binding = epoch;
      getContext()
          .ask(
              DatasetEntity.LayoutReply.class,
              ClusterSharding.get(getContext().getSystem())
                  .entityRefFor(DatasetEntity.TYPE_KEY, spec.dataset()),
              BIND_TIMEOUT,
              replyTo -> new DatasetEntity.GetLayout(null, replyTo),
              (reply, failure) -> new NewestLayout(epoch, reply, failure));
    }
    return this;
  }

  private Behavior<Command> onNewestLayout(NewestLayout newest) {
    binding = -1;
    if (spec == null) {
      return stash.unstashAll(this);
    }
    PinnedLayout found = null;
    if (newest.reply() != null && newest.reply().layout() != null) {
      DatasetLayout at = newest.reply().layout();
      found = new PinnedLayout(at.snapshotId(), at.fingerprint(), at.rows());
    } else {
      // The dataset cannot say (moving, reloading): the epoch reads what the last one read.
      LOG.info(
          "Job '{}': dataset '{}' gave no layout for epoch {} ({}); it keeps its layout",
          jobId,
          spec.dataset(),
          newest.epoch(),
          newest.failure() != null ? newest.failure().toString() : newest.reply().status().state());
    }
    bind(newest.epoch(), found);
    return stash.unstashAll(this);
  }

  /** Decides the layout of every epoch up to {@code epoch}: {@code newest} from it on, if given. */
  private void bind(long epoch, PinnedLayout newest) {
    if (epoch <= boundThrough) {
      return;
    }
    if (newest != null && !newest.equals(layoutFor(epoch))) {
      epochLayouts.put(epoch, newest);
      LOG.info(
          "Job '{}' reads epoch {} on dataset '{}' snapshot {} (layout {})",
          jobId,
          epoch,
          spec.dataset(),
          newest.snapshotId(),
          newest.fingerprint());
    }
    boundThrough = epoch;
    write(List.of());
    hold();
  }

  private PinnedLayout layoutFor(long epoch) {
    java.util.Map.Entry<Long, PinnedLayout> entry = epochLayouts.floorEntry(Math.max(0, epoch));
    return entry == null ? layout : entry.getValue();
  }

  /**
   * Tells the dataset which layouts the job still reads: its latest epoch's and the one before
   * (ranks may still finish that one), or its only layout when pinned.
   */
  private void hold() {
    java.util.LinkedHashSet<String> now = new java.util.LinkedHashSet<>();
    now.add(layoutFor(boundThrough).fingerprint());
    if (!spec.pinLayout()) {
      now.add(layoutFor(boundThrough - 1).fingerprint());
    }
    List<String> fingerprints = List.copyOf(now);
    if (!fingerprints.equals(held)) {
      held = fingerprints;
      ClusterSharding.get(getContext().getSystem())
          .entityRefFor(DatasetEntity.TYPE_KEY, spec.dataset())
          .tell(new DatasetEntity.Hold(jobId, fingerprints));
    }
  }

  /** An entity without a job leaves, so that asking for unknown ids does not pile them up. */
  private Behavior<Command> passivate() {
    entity.getShard().tell(new ClusterSharding.Passivate<>(getContext().getSelf()));
    return this;
  }

  private Behavior<Command> onDrop(DropJob drop) {
    if (spec == null) {
      drop.replyTo().tell(new JobReply.Refused(unknown()));
      return passivate();
    }
    JobReply last = new JobReply.Found(status(null));
    ClusterSharding.get(getContext().getSystem())
        .entityRefFor(DatasetEntity.TYPE_KEY, spec.dataset())
        .tell(new DatasetEntity.Unhold(jobId));
    spec = null;
    live.stopped(jobId);
    layout = null;
    epochLayouts.clear();
    held = List.of();
    epochs.clear();
    unwritten.forEach(Runnable::run);
    unwritten = new ArrayList<>();
    DIRECTORY.remove(replicator, node, jobId, majority -> new RecordWritten(majority, List.of()));
    drop.replyTo().tell(last);
    LOG.info("Job '{}' dropped", jobId);
    return passivate();
  }

  private Behavior<Command> onLease(Lease lease) {
    Failure refused = checkDynamic(lease.epoch());
    if (refused != null) {
      lease.replyTo().tell(new LeaseReply.Refused(refused));
      return this;
    }
    if (mustBind(lease.epoch())) {
      if (!spec.pinLayout()) {
        return askNewest(lease.epoch(), lease);
      }
      bind(lease.epoch(), null);
    }
    GrantedLease granted = lastGrants.get(lease.worker());
    if (granted != null
        && granted.request().equals(lease.request())
        && granted.epoch() == lease.epoch()) {
      lease.replyTo().tell(granted.reply());
      return this;
    }
    EpochLeases.Grant grant = book(lease.epoch()).lease(lease.worker(), now());
    LeaseReply reply;
    if (grant.lease() != null) {
      reply = new LeaseReply.Leased(grant.lease(), grant.batch(), spec.batchRows());
      lastGrants.put(lease.worker(), new GrantedLease(lease.request(), lease.epoch(), reply));
    } else if (grant.done()) {
      reply = new LeaseReply.Done(lease.epoch());
    } else {
      reply = new LeaseReply.Wait(grant.retryMillis());
    }
    lease.replyTo().tell(reply);
    return this;
  }

  private static AckReply notFound(String message) {
    return new AckReply.Refused(new Failure(FailureKind.LEASE_NOT_FOUND, message));
  }

  private Behavior<Command> onAck(Ack ack) {
    Failure refused = checkDynamic(ack.epoch());
    if (refused != null) {
      ack.replyTo().tell(new AckReply.Refused(refused));
      return this;
    }
    if (!epochs.containsKey(ack.epoch()) && epochs.size() >= EPOCHS_KEPT) {
      // Only leases create epochs once the job keeps its fill: a stray ack must not push out an
      // epoch that workers are still on.
      ack.replyTo()
          .tell(
              notFound(String.format("Job '%s' has no epoch %d in progress", jobId, ack.epoch())));
      return this;
    }
    EpochLeases.AckOutcome outcome = book(ack.epoch()).ack(ack.lease(), now());
    if (outcome == EpochLeases.AckOutcome.ACKNOWLEDGED) {
      // Answered once a majority holds it, so that it survives this node.
      awaitWrite(() -> ack.replyTo().tell(new AckReply.Answered(AckReply.Outcome.ACKNOWLEDGED)));
    } else if (outcome == EpochLeases.AckOutcome.UNKNOWN) {
      ack.replyTo()
          .tell(
              notFound(
                  String.format(
                      "Job '%s' issued no lease '%s' in epoch %d",
                      jobId, ack.lease(), ack.epoch())));
    } else if (outcome == EpochLeases.AckOutcome.DUPLICATE && (writing || !unwritten.isEmpty())) {
      // An ack asked again (its first answer was lost or late) may find its batch counted but
      // not yet on a majority: "duplicate" promises it is kept, so it waits for the next write.
      awaitWrite(() -> ack.replyTo().tell(new AckReply.Answered(AckReply.Outcome.DUPLICATE)));
    } else {
      ack.replyTo()
          .tell(
              new AckReply.Answered(
                  outcome == EpochLeases.AckOutcome.EXPIRED
                      ? AckReply.Outcome.EXPIRED
                      : AckReply.Outcome.DUPLICATE));
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

  /**
   * Queues a reply for the next write of the record. Writes go out at most every FLUSH_EVERY, so
   * acknowledgements arriving together share one; the timer runs only while replies wait.
   */
  private void awaitWrite(Runnable reply) {
    unwritten.add(reply);
    scheduleFlush();
  }

  private void scheduleFlush() {
    if (!timers.isTimerActive(FLUSH_TIMER)) {
      timers.startSingleTimer(FLUSH_TIMER, new Flush(), FLUSH_EVERY);
    }
  }

  private Behavior<Command> onFlush() {
    if (!unwritten.isEmpty() && !writing) {
      List<Runnable> replies = unwritten;
      unwritten = new ArrayList<>();
      write(replies);
    }
    return this;
  }

  /** Writes the record; once a majority has it (or the write timed out), sends the replies. */
  private void write(List<Runnable> replies) {
    if (spec == null) {
      replies.forEach(Runnable::run);
      return;
    }
    List<JobRecord.EpochAcks> acks = new ArrayList<>();
    epochs.forEach(
        (epoch, book) ->
            acks.add(new JobRecord.EpochAcks(epoch, book.acknowledgedWords(), book.recentAcks())));
    List<JobRecord.EpochLayout> layouts = new ArrayList<>();
    epochLayouts.forEach((from, at) -> layouts.add(new JobRecord.EpochLayout(from, at)));
    JobRecord record = new JobRecord(spec, layout, acks, layouts, boundThrough);
    writing = true;
    DIRECTORY.write(
        replicator,
        node,
        jobId,
        held -> record.mergedWith(held),
        majority -> new RecordWritten(majority, replies));
  }

  private Behavior<Command> onWritten(RecordWritten written) {
    writing = false;
    if (written.ok()) {
      written.replies().forEach(Runnable::run);
    } else {
      // Not on a majority (members joining or leaving): answer nothing yet and write again at the
      // next flush; a worker whose ack times out asks again and is answered then.
      LOG.warn("Job '{}': its record did not reach a majority in time; writing again", jobId);
      List<Runnable> retry = new ArrayList<>(written.replies());
      retry.addAll(unwritten);
      unwritten = retry;
      if (unwritten.isEmpty() && spec != null) {
        unwritten.add(() -> {});
      }
    }
    if (!unwritten.isEmpty()) {
      scheduleFlush(); // replies that came in while this write was out
    }
    return this;
  }

  private Behavior<Command> onPostStop() {
    live.stopped(jobId); // it runs elsewhere now, or nowhere
    return this;
  }

  private Behavior<Command> onStop() {
    // Hand-off: acknowledgements not yet written are not answered; their senders ask again.
    return Behaviors.stopped();
  }

  private EpochShape shape(long epoch) {
    return new EpochShape(layoutFor(epoch).rows(), spec.batchRows(), spec.tail());
  }

  private EpochLeases book(long epoch) {
    EpochLeases book = epochs.get(epoch);
    if (book == null) {
      EpochShape shape = shape(epoch);
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
        FailureKind.JOB_NOT_FOUND, "Unknown job '" + jobId + "': register it first (register_job)");
  }

  /** The status, with {@code epoch}'s layout (else the latest begun epoch's). */
  private JobStatus status(Long epoch) {
    long shown = epoch != null ? epoch : Math.max(0, boundThrough);
    List<JobRecord.EpochLayout> layouts = new ArrayList<>();
    epochLayouts.forEach((from, at) -> layouts.add(new JobRecord.EpochLayout(from, at)));
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
        shown,
        layoutFor(shown),
        layouts,
        shape(shown).batches(),
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
