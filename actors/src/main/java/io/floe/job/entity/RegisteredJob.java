package io.floe.job.entity;

import io.floe.dataset.DatasetEntity;
import io.floe.dataset.Failure;
import io.floe.ddata.RecordDirectory;
import io.floe.error.ErrorKind;
import io.floe.job.EpochLeases;
import io.floe.job.EpochProgress;
import io.floe.job.EpochShape;
import io.floe.job.JobCounters;
import io.floe.job.JobMode;
import io.floe.job.JobRecord;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.job.entity.JobEntity.AckReply;
import io.floe.job.entity.JobEntity.Command;
import io.floe.job.entity.JobEntity.JobReply;
import io.floe.job.entity.JobEntity.LeaseReply;
import io.floe.spec.DatasetLayout;
import io.floe.tenant.Owner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * A registered job: the layout each epoch reads, the datasets' layouts it holds, and in dynamic
 * mode the lease books of its recent epochs, written to its record before acknowledgements are
 * answered. Dropping it makes the entity an {@link UnregisteredJob}.
 */
final class RegisteredJob extends AbstractBehavior<Command> {
  /** Dynamic epochs kept per job; older ones are forgotten. */
  private static final int EPOCHS_KEPT = JobRecord.EPOCHS_KEPT;

  /** Workers whose last granted lease is remembered, to answer a request asked twice. */
  private static final int GRANTS_KEPT = 4_096;

  /** Acknowledgements are written to the record in groups, at most this often. */
  private static final java.time.Duration FLUSH_EVERY = java.time.Duration.ofMillis(25);

  private static final String FLUSH_TIMER = "flush";

  /** How long a new epoch waits for the dataset's newest layout before keeping the last one. */
  private static final java.time.Duration BIND_TIMEOUT = java.time.Duration.ofSeconds(10);

  private static final org.slf4j.Logger LOG = JobEntity.LOG;

  private final JobContext job;
  private final String jobId;
  private final JobSpec spec;

  /**
   * The caller that registered it, the only one (besides an admin) that may drop it; null for a job
   * registered before owners were kept. Registering the same job again does not change it.
   */
  private final Owner owner;

  /** The layout the job was registered on; its identity with the spec. */
  private final PinnedLayout layout;

  /** The layout of each epoch: epochs from a key on read its layout, until the next key. */
  private final TreeMap<Long, PinnedLayout> epochLayouts = new TreeMap<>();

  /** Epochs up to this one have begun: their layout is decided. */
  private long boundThrough = -1;

  /** An epoch whose newest layout is being asked for, or -1; its requests wait in the stash. */
  private long binding = -1;

  /** The fingerprints last told to the dataset as held. */
  private List<String> held = List.of();

  private final JobCounters counters = new JobCounters();
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

  /** The replies of the write in flight, sent once a majority has it; null when none is. */
  private List<Runnable> writing;

  /** Tells this registration's layout answers from those of an earlier one of the same id. */
  private final long registration;

  private RegisteredJob(JobContext job, JobSpec spec, PinnedLayout layout, Owner owner) {
    super(job.actor());
    this.owner = owner;
    this.job = job;
    this.registration = job.nextRegistration();
    this.jobId = job.jobId();
    this.spec = spec;
    this.layout = layout;
    job.live().started(jobId, () -> counters);
  }

  /** A new registration: its first epoch reads {@code register}'s layout. */
  static Behavior<Command> register(JobContext job, JobEntity.Register register) {
    RegisteredJob registered =
        new RegisteredJob(job, register.spec(), register.layout(), register.owner());
    registered.epochLayouts.put(0L, registered.layout);
    LOG.info(
        "Job '{}' registered on dataset '{}' by {}; its entity is on this node",
        job.jobId(),
        registered.spec.dataset(),
        registered.owner);
    registered.write(List.of());
    registered.hold();
    register.replyTo().tell(new JobReply.Found(registered.status(null)));
    return registered;
  }

  /** A job started again from its record: its layouts and acknowledged batches as written. */
  static Behavior<Command> recovering(JobContext job, JobRecord record) {
    RegisteredJob registered =
        new RegisteredJob(job, record.spec(), record.layout(), record.owner());
    record.layouts().forEach(l -> registered.epochLayouts.put(l.fromEpoch(), l.layout()));
    registered.boundThrough = record.boundThrough();
    for (JobRecord.EpochAcks acks : record.epochs()) {
      registered.epochs.put(
          acks.epoch(),
          new EpochLeases(
              acks.epoch(),
              registered.shape(acks.epoch()),
              registered.spec.leaseTimeoutMillis(),
              registered.counters,
              acks.acknowledged(),
              acks.recentAcks()));
    }
    registered.hold();
    return registered;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(JobEntity.Register.class, this::onRegister)
        .onMessage(JobEntity.GetJob.class, this::onGet)
        .onMessage(JobEntity.DropJob.class, this::onDrop)
        .onMessage(JobEntity.Lease.class, this::onLease)
        .onMessage(JobEntity.Ack.class, this::onAck)
        .onMessage(JobEntity.NewestLayout.class, this::onNewestLayout)
        .onMessage(JobEntity.Flush.class, flush -> onFlush())
        .onMessage(JobEntity.RecordWritten.class, this::onWritten)
        .onMessage(JobEntity.Stop.class, stop -> onStop())
        .onSignal(org.apache.pekko.actor.typed.PostStop.class, stopped -> onPostStop())
        .build();
  }

  private Behavior<Command> onRegister(JobEntity.Register register) {
    if (!spec.equals(register.spec())) {
      // The same job registered again (every rank may register, also after a refresh): it keeps
      // the layouts its epochs read.
      register
          .replyTo()
          .tell(
              new JobReply.Refused(
                  new Failure(
                      ErrorKind.ALREADY_EXISTS,
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
            + " block_rows=%d, window_blocks=%d, run_rows=%d, lease_timeout_ms=%d",
        spec.dataset(),
        spec.mode().wireName(),
        spec.seed(),
        spec.shuffle(),
        spec.columns(),
        spec.batchRows(),
        spec.tail().wireName(),
        spec.blockRows(),
        spec.windowBlocks(),
        spec.runRows(),
        spec.leaseTimeoutMillis());
  }

  private Behavior<Command> onGet(JobEntity.GetJob get) {
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
    job.stash().stash(request);
    if (binding < 0) {
      binding = epoch;
      getContext()
          .ask(
              DatasetEntity.LayoutReply.class,
              job.dataset(spec.dataset()),
              BIND_TIMEOUT,
              replyTo -> new DatasetEntity.GetLayout(null, replyTo),
              (reply, failure) -> new JobEntity.NewestLayout(registration, epoch, reply, failure));
    }
    return this;
  }

  private Behavior<Command> onNewestLayout(JobEntity.NewestLayout newest) {
    if (newest.registration() != registration) {
      return this; // asked before the job was dropped and registered again
    }
    binding = -1;
    PinnedLayout found = null;
    if (newest.reply() instanceof DatasetEntity.LayoutReply.Found served) {
      DatasetLayout at = served.layout();
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
    return job.stash().unstashAll(this);
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
      job.dataset(spec.dataset()).tell(new DatasetEntity.Hold(jobId, fingerprints));
    }
  }

  private Behavior<Command> onDrop(JobEntity.DropJob drop) {
    java.util.Optional<String> refused = drop.requester().mayNotDropJob(jobId, owner);
    if (refused.isPresent()) {
      LOG.info("Job '{}': drop refused: {}", jobId, refused.get());
      drop.replyTo().tell(new JobReply.Refused(new Failure(ErrorKind.NOT_OWNER, refused.get())));
      return this;
    }
    JobReply last = new JobReply.Found(status(null));
    job.dataset(spec.dataset()).tell(new DatasetEntity.Unhold(jobId));
    job.live().stopped(jobId);
    // Acknowledgements counted but not yet on a majority are answered now: the job they count
    // for is gone, and the entity may stop before the write comes back.
    if (writing != null) {
      writing.forEach(Runnable::run);
    }
    unwritten.forEach(Runnable::run);
    job.timers().cancel(FLUSH_TIMER);
    job.forgetRecord();
    drop.replyTo().tell(last);
    LOG.info("Job '{}' dropped", jobId);
    job.leave();
    // Requests that waited for an epoch's layout are refused now, as for any unknown job.
    return job.stash().unstashAll(new UnregisteredJob(job));
  }

  private Behavior<Command> onLease(JobEntity.Lease lease) {
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
    return new AckReply.Refused(new Failure(ErrorKind.LEASE_NOT_FOUND, message));
  }

  private Behavior<Command> onAck(JobEntity.Ack ack) {
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
    } else if (outcome == EpochLeases.AckOutcome.DUPLICATE
        && (writing != null || !unwritten.isEmpty())) {
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
    if (spec.mode() != JobMode.DYNAMIC) {
      return new Failure(
          ErrorKind.INVALID_ARGUMENT,
          "Job '" + jobId + "' is deterministic; leases are for dynamic jobs");
    }
    if (epoch < 0) {
      return new Failure(ErrorKind.INVALID_ARGUMENT, "Invalid epoch: " + epoch);
    }
    if (!epochs.isEmpty() && epoch < epochs.firstKey() && epochs.size() >= EPOCHS_KEPT) {
      return new Failure(
          ErrorKind.INVALID_ARGUMENT,
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
    if (!job.timers().isTimerActive(FLUSH_TIMER)) {
      job.timers().startSingleTimer(FLUSH_TIMER, new JobEntity.Flush(), FLUSH_EVERY);
    }
  }

  private Behavior<Command> onFlush() {
    if (!unwritten.isEmpty() && writing == null) {
      List<Runnable> replies = unwritten;
      unwritten = new ArrayList<>();
      write(replies);
    }
    return this;
  }

  /** Writes the record; once a majority has it (or the write timed out), sends the replies. */
  private void write(List<Runnable> replies) {
    List<JobRecord.EpochAcks> acks = new ArrayList<>();
    epochs.forEach(
        (epoch, book) ->
            acks.add(new JobRecord.EpochAcks(epoch, book.acknowledgedWords(), book.recentAcks())));
    List<JobRecord.EpochLayout> layouts = new ArrayList<>();
    epochLayouts.forEach((from, at) -> layouts.add(new JobRecord.EpochLayout(from, at)));
    JobRecord record = new JobRecord(spec, layout, acks, layouts, boundThrough, owner);
    writing = replies;
    job.writeRecord(record, replies);
  }

  private Behavior<Command> onWritten(JobEntity.RecordWritten written) {
    writing = null;
    if (written.written() == RecordDirectory.Written.MAJORITY) {
      written.replies().forEach(Runnable::run);
    } else {
      // Not on a majority (members joining or leaving): answer nothing yet and write again at the
      // next flush; a worker whose ack times out asks again and is answered then.
      LOG.warn(
          "Job '{}': its record {}; writing again",
          jobId,
          written.written() == RecordDirectory.Written.THIS_NODE
              ? "did not reach a majority in time"
              : "change was not applied (the replicator or its durable store refused it)");
      List<Runnable> retry = new ArrayList<>(written.replies());
      retry.addAll(unwritten);
      unwritten = retry;
      if (unwritten.isEmpty()) {
        unwritten.add(() -> {});
      }
    }
    if (!unwritten.isEmpty()) {
      scheduleFlush(); // replies that came in while this write was out
    }
    return this;
  }

  private Behavior<Command> onPostStop() {
    job.live().stopped(jobId); // it runs elsewhere now, or nowhere
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
        progress,
        owner);
  }

  private static long now() {
    return System.currentTimeMillis();
  }
}
