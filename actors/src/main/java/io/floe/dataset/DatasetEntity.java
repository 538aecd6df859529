package io.floe.dataset;

import io.floe.ddata.RecordRecovery;
import io.floe.iceberg.ScanPlan;
import io.floe.iceberg.SliceSpec;
import io.floe.resources.DatasetPlanning;
import io.floe.serialization.CborSerializable;
import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import io.floe.table.FailureKind;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityContext;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/**
 * One loaded dataset, placed by cluster sharding under its name. It plans the scan on the load
 * threads, asks its slice entities to load with bounded concurrency, and tracks PLANNING → LOADING
 * k/n → READY (or FAILED with the reason, after releasing every slice it loaded). Once READY it
 * answers the layout (slice row counts and holders; the prefix sums of the counts are the global
 * row index) that the gateway plans reads with.
 *
 * <p>Refresh: it plans the table's newest snapshot as a second {@link DatasetVersion}, loads only
 * the slices that version does not share with the serving one (slice ids name their content), and
 * switches readers to it at once when every slice is held. The replaced layout stays while a job
 * holds it (a job finishes its epoch on the layout it started with, see {@link Hold}); its slices
 * that nothing uses any more are freed after the retire linger, so reads planned before the switch
 * finish.
 *
 * <p>Surviving nodes that come and go: its record (spec, generation, served and retained snapshots,
 * holders) is replicated in Distributed Data and the entity is remembered, so after its node fails
 * it restarts elsewhere, re-plans the same slices and gathers them again (LOADING until every slice
 * has answered). A slice that restarts on another node (rebalance, crash) asks for its spec; the
 * dataset then shows DEGRADED with that slice missing until it reports loaded from its new holder.
 * A refresh in progress when the entity moves is lost; its caller refreshes again.
 */
public final class DatasetEntity extends AbstractBehavior<DatasetEntity.Command> {
  public static final EntityTypeKey<Command> TYPE_KEY =
      EntityTypeKey.create(Command.class, "floe-dataset");

  /** Every loaded dataset entity, cluster-wide, for {@code list}. */
  public static final ServiceKey<Command> LOADED =
      ServiceKey.create(Command.class, "floe-datasets");

  private static final int STASH_CAPACITY = 10_000;
  private static final java.time.Duration ASK_MISSING_EVERY = java.time.Duration.ofSeconds(5);
  // A logger of its own: an actor's context logger is named after its current behavior, which
  // during recovery is not this class.
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(DatasetEntity.class);

  /** Messages a dataset entity takes. */
  public sealed interface Command extends CborSerializable {}

  /**
   * Load (idempotent for the same spec). The reply comes once planning is done, or, with {@code
   * untilReady}, once the dataset is READY or FAILED.
   */
  public record Load(DatasetSpec spec, boolean untilReady, ActorRef<LoadReply> replyTo)
      implements Command {}

  public record GetStatus(ActorRef<DatasetStatus> replyTo) implements Command {}

  /**
   * The layout with this fingerprint (the one serving, or one kept for jobs), or with a null
   * fingerprint the one serving.
   */
  public record GetLayout(String fingerprint, ActorRef<LayoutReply> replyTo) implements Command {
    public GetLayout(ActorRef<LayoutReply> replyTo) {
      this(null, replyTo);
    }
  }

  /**
   * Plan the table's newest snapshot and switch to it, loading only what changed. The reply comes
   * at once, or with {@code untilDone} once the new layout serves (or the refresh failed). With a
   * {@code spec} (from a load of the newest snapshot), the dataset's must be the same but for the
   * snapshot.
   */
  public record Refresh(DatasetSpec spec, boolean untilDone, ActorRef<LoadReply> replyTo)
      implements Command {}

  /**
   * From a job: the layouts (by fingerprint) it reads, which the dataset keeps until no job holds
   * them; replaces what the job held before.
   */
  public record Hold(String job, List<String> fingerprints) implements Command {}

  /** From a dropped job: it holds nothing any more. */
  public record Unhold(String job) implements Command {}

  public record Drop(ActorRef<DatasetStatus> replyTo) implements Command {}

  /** From a slice entity that (re)started without a spec: which slice am I, whom do I report to? */
  public record GetSliceSpec(String sliceId, ActorRef<SliceAssignment> replyTo)
      implements Command {}

  /** Stop for a hand-off or shutdown; the record stays, so the entity recovers where it lands. */
  public record Stop() implements Command {}

  private record Planned(ScanPlan plan, Throwable failure) implements Command {}

  private record RefreshPlanned(ScanPlan plan, Throwable failure) implements Command {}

  private record RetainedPlanned(long snapshotId, ScanPlan plan, Throwable failure)
      implements Command {}

  /** The retire linger of a replaced layout's slices is over. */
  private record ReleaseRetired(List<String> sliceIds) implements Command {}

  private record SliceReply(SliceEntity.LoadResult result) implements Command {}

  private record RecordRead(DatasetRecord record, boolean failed, boolean local)
      implements Command, RecordRecovery.Read<DatasetRecord> {}

  private record RecordWritten(String outcome) implements Command {}

  /** Ask missing slices again: sharding delivers at most once, and hand-offs can drop a message. */
  private record AskMissing() implements Command {}

  /** The answer to a load: the status so far, or why the load was refused or failed. */
  public sealed interface LoadReply extends CborSerializable {
    /** The dataset's status after the request. */
    DatasetStatus status();

    /** Taken (or already done): the status says how far the dataset is. */
    record Answered(DatasetStatus status) implements LoadReply {}

    /** Refused or failed, and why; the status is the dataset's as it stays. */
    record Refused(DatasetStatus status, Failure failure) implements LoadReply {}

    /** Refused when {@code failure} says why, else answered. */
    static LoadReply of(DatasetStatus status, Failure failure) {
      return failure == null ? new Answered(status) : new Refused(status, failure);
    }
  }

  /** The layout of a READY (or DEGRADED) dataset, or its status when it has none. */
  public record LayoutReply(DatasetLayout layout, DatasetStatus status)
      implements CborSerializable {}

  /** A slice's spec and where to report its load, or a null spec when the slice is not wanted. */
  /**
   * @param restart whether the slice had loaded before (it is starting again after its node left or
   *     died, or a rebalance), rather than loading for the first time
   */
  public record SliceAssignment(
      SliceSpec spec, ActorRef<SliceEntity.LoadResult> reportTo, boolean restart)
      implements CborSerializable {}

  public static void init(ActorSystem<?> system, DatasetPlanning planning) {
    // Start this node's replicator now: it is created lazily, and a node without one neither
    // takes part in majority writes nor keeps a copy of the dataset records.
    DistributedData.get(system);
    ClusterSharding.get(system)
        .init(
            Entity.of(TYPE_KEY, ctx -> create(ctx, planning))
                .withStopMessage(new Stop())
                .withSettings(ClusterShardingSettings.create(system).withRememberEntities(true)));
  }

  static Behavior<Command> create(EntityContext<Command> entity, DatasetPlanning planning) {
    // Every line this entity logs carries its dataset (a field of JSON logs).
    return Behaviors.withMdc(
        Command.class,
        java.util.Map.of("dataset", entity.getEntityId()),
        Behaviors.withTimers(
            timers -> {
              timers.startTimerWithFixedDelay(new AskMissing(), ASK_MISSING_EVERY);
              return createWithTimers(entity, planning, timers);
            }));
  }

  private static Behavior<Command> createWithTimers(
      EntityContext<Command> entity, DatasetPlanning planning, TimerScheduler<Command> timers) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withStash(
                STASH_CAPACITY,
                stash ->
                    DistributedData.withReplicatorMessageAdapter(
                        (ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>>
                                replicator) ->
                            recover(ctx, entity, planning, timers, stash, replicator))));
  }

  /** Reads this dataset's record (if any) before taking messages, stashing them meanwhile. */
  private static Behavior<Command> recover(
      ActorContext<Command> ctx,
      EntityContext<Command> entity,
      DatasetPlanning planning,
      TimerScheduler<Command> timers,
      StashBuffer<Command> stash,
      ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator) {
    String name = entity.getEntityId();
    return RecordRecovery.recover(
        Command.class,
        stash,
        replicator,
        DatasetDirectory.KEY,
        name,
        DatasetDirectory.read(),
        RecordRead.class,
        RecordRead::new,
        (record, unreadable) -> {
          if (unreadable) {
            LOG.warn("Dataset '{}': its record could not be read; starting empty", name);
          } else {
            LOG.info(
                "Dataset '{}' entity started {}",
                name,
                record == null ? "with no record" : "from its record");
          }
          return new DatasetEntity(ctx, entity, planning, timers, replicator, record);
        });
  }

  private final String name;
  private final EntityContext<Command> entity;
  private final DatasetPlanning planning;
  private final TimerScheduler<Command> timers;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator;
  private final SelfUniqueAddress selfAddress;
  private final ClusterSharding sharding;
  private final ActorRef<SliceEntity.LoadResult> sliceReplies;
  private final List<ActorRef<LoadReply>> waitingForPlan = new ArrayList<>();
  private final List<ActorRef<LoadReply>> waitingForReady = new ArrayList<>();
  private final List<ActorRef<LoadReply>> waitingForRefresh = new ArrayList<>();
  private final List<GetSliceSpec> waitingForSpecs = new ArrayList<>();

  private DatasetState state = DatasetState.ABSENT;
  private DatasetSpec spec;
  private long generation;
  private long requestedAtNanos;

  /** Seconds from the load request to READY; null until then. */
  private Double secondsToReady;

  private Failure failure;

  /** The version readers plan with (or the first one, while it loads). */
  private DatasetVersion current;

  /** A refresh's version while its new slices load; null when no refresh runs. */
  private DatasetVersion next;

  /** Replaced versions that jobs still read, by snapshot id. */
  private final Map<Long, DatasetVersion> retained = new TreeMap<>();

  /** Job id to the layout fingerprints it reads. */
  private final Map<String, Set<String>> holders = new LinkedHashMap<>();

  /** Slices no version uses, freed when their retire linger ends. */
  private final Set<String> retiring = new LinkedHashSet<>();

  /** Retained snapshots a recovering entity is planning again (kept in the record meanwhile). */
  private final Set<Long> retainedPlanning = new LinkedHashSet<>();

  private RefreshReport refresh;
  private long refreshStartedNanos;

  private DatasetEntity(
      ActorContext<Command> context,
      EntityContext<Command> entity,
      DatasetPlanning planning,
      TimerScheduler<Command> timers,
      ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator,
      DatasetRecord record) {
    super(context);
    this.name = entity.getEntityId();
    this.entity = entity;
    this.planning = planning;
    this.timers = timers;
    this.replicator = replicator;
    this.selfAddress = DistributedData.get(context.getSystem()).selfUniqueAddress();
    this.sharding = ClusterSharding.get(context.getSystem());
    this.sliceReplies = context.messageAdapter(SliceEntity.LoadResult.class, SliceReply::new);
    if (record != null) {
      LOG.info("Dataset '{}': recovering generation {}", name, record.generation());
      spec = record.spec();
      record.holders().forEach((job, fps) -> holders.put(job, new HashSet<>(fps)));
      // Their linger cannot be resumed: free them now.
      record.retiring().forEach(this::release);
      start(record.pinnedSpec(), record.generation());
      for (long snapshot : record.retainedSnapshots()) {
        retainedPlanning.add(snapshot);
        plan(
            spec.withSnapshotId(snapshot),
            generation,
            (plan, failure) -> new RetainedPlanned(snapshot, plan, failure));
      }
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Load.class, this::onLoad)
        .onMessage(Planned.class, this::onPlanned)
        .onMessage(Refresh.class, this::onRefresh)
        .onMessage(RefreshPlanned.class, this::onRefreshPlanned)
        .onMessage(RetainedPlanned.class, this::onRetainedPlanned)
        .onMessage(SliceReply.class, this::onSliceReply)
        .onMessage(GetSliceSpec.class, this::onGetSliceSpec)
        .onMessage(GetStatus.class, this::onGetStatus)
        .onMessage(GetLayout.class, this::onGetLayout)
        .onMessage(Hold.class, this::onHold)
        .onMessage(Unhold.class, this::onUnhold)
        .onMessage(ReleaseRetired.class, this::onReleaseRetired)
        .onMessage(Drop.class, this::onDrop)
        .onMessage(
            RecordWritten.class,
            w -> {
              LOG.debug("Dataset '{}': record update {}", name, w.outcome());
              return this;
            })
        .onMessage(RecordRead.class, r -> this)
        .onMessage(AskMissing.class, m -> onAskMissing())
        .onMessage(Stop.class, s -> Behaviors.stopped())
        .build();
  }

  private Behavior<Command> onLoad(Load load) {
    if (state == DatasetState.ABSENT || state == DatasetState.FAILED) {
      spec = load.spec();
      start(load.spec(), System.currentTimeMillis());
    } else if (!load.spec().equals(spec)) {
      String message =
          String.format(
              "Dataset '%s' is already loaded from '%s' with other settings;"
                  + " drop it first or choose another name",
              name, spec.table());
      load.replyTo()
          .tell(new LoadReply.Refused(status(), new Failure(FailureKind.ALREADY_EXISTS, message)));
      return this;
    }
    if (load.untilReady() && (state == DatasetState.PLANNING || state == DatasetState.LOADING)) {
      waitingForReady.add(load.replyTo());
    } else if (state == DatasetState.PLANNING) {
      waitingForPlan.add(load.replyTo());
    } else {
      load.replyTo().tell(LoadReply.of(status(), failure));
    }
    return this;
  }

  /** Plans {@code toPlan} (the spec, pinned to a snapshot when recovering) under a generation. */
  private void start(DatasetSpec toPlan, long newGeneration) {
    generation = newGeneration;
    state = DatasetState.PLANNING;
    failure = null;
    current = null;
    secondsToReady = null;
    requestedAtNanos = System.nanoTime();
    LOG.info("Dataset '{}': planning {}", name, toPlan.table());
    plan(toPlan, newGeneration, Planned::new);
  }

  /** Plans on the load threads; the outcome comes back as the message {@code outcome} makes. */
  private void plan(
      DatasetSpec toPlan,
      long planGeneration,
      java.util.function.BiFunction<ScanPlan, Throwable, Command> outcome) {
    CompletableFuture<ScanPlan> plan =
        CompletableFuture.supplyAsync(
            () -> {
              TableSource source = planning.tables().resolve(toPlan.table(), toPlan.catalog());
              return planning
                  .planner()
                  .plan(source, planning.tables().open(source), toPlan, planGeneration);
            },
            planning.loadExecutor());
    getContext().pipeToSelf(plan, outcome::apply);
  }

  private Behavior<Command> onPlanned(Planned planned) {
    if (state != DatasetState.PLANNING) {
      return this; // dropped while planning
    }
    if (planned.failure() != null) {
      fail(Failure.of(planned.failure()));
      return this;
    }
    current = new DatasetVersion(planned.plan());
    state = DatasetState.LOADING;
    LOG.info("Dataset '{}': snapshot {}, {} slices", name, current.snapshotId(), current.size());
    writeRecord();
    getContext()
        .getSystem()
        .receptionist()
        .tell(Receptionist.register(LOADED, getContext().getSelf()));
    reply(waitingForPlan);
    answerWaitingSpecs();
    dispatch(current, planning.loadsPerDataset());
    readyIfComplete();
    return this;
  }

  private Behavior<Command> onRefresh(Refresh request) {
    if (state == DatasetState.ABSENT) {
      request
          .replyTo()
          .tell(
              new LoadReply.Refused(
                  status(),
                  new Failure(
                      FailureKind.DATASET_NOT_FOUND,
                      "No dataset '" + name + "' to refresh; load it")));
      return stopIfAbsent();
    }
    if (request.spec() != null
        && !request.spec().withSnapshotId(null).equals(spec.withSnapshotId(null))) {
      String message =
          String.format(
              "Dataset '%s' is already loaded from '%s' with other settings;"
                  + " drop it first or choose another name",
              name, spec.table());
      request
          .replyTo()
          .tell(new LoadReply.Refused(status(), new Failure(FailureKind.ALREADY_EXISTS, message)));
      return this;
    }
    if (state != DatasetState.READY && state != DatasetState.DEGRADED) {
      // The gateway tells the caller the dataset is not ready (or why it failed).
      request.replyTo().tell(LoadReply.of(status(), failure));
      return this;
    }
    if (next == null && (refresh == null || !RefreshReport.RUNNING.equals(refresh.state()))) {
      refreshStartedNanos = System.nanoTime();
      refresh =
          new RefreshReport(RefreshReport.RUNNING, current.snapshotId(), null, 0, 0, 0, 0, null);
      LOG.info("Dataset '{}': refreshing from snapshot {}", name, current.snapshotId());
      plan(spec.withSnapshotId(null), generation, RefreshPlanned::new);
    }
    if (request.untilDone()) {
      waitingForRefresh.add(request.replyTo());
    } else {
      request.replyTo().tell(new LoadReply.Answered(status()));
    }
    return this;
  }

  private Behavior<Command> onRefreshPlanned(RefreshPlanned planned) {
    if (current == null || state == DatasetState.FAILED || state == DatasetState.ABSENT) {
      return this; // dropped or failed meanwhile
    }
    long from = current.snapshotId();
    if (planned.failure() != null) {
      Failure why = Failure.of(planned.failure());
      LOG.warn("Dataset '{}': refresh failed ({}): {}", name, why.kind(), why.message());
      finishRefresh(new RefreshReport(RefreshReport.FAILED, from, null, 0, 0, 0, seconds(), why));
      return this;
    }
    ScanPlan plan = planned.plan();
    if (plan.snapshotId() == from) {
      finishRefresh(
          new RefreshReport(
              RefreshReport.UNCHANGED, from, from, current.size(), 0, 0, seconds(), null));
      return this;
    }
    next = new DatasetVersion(plan);
    int kept = 0;
    for (String sliceId : next.sliceIds()) {
      SliceEntity.Loaded held = heldReport(sliceId);
      if (held != null) {
        next.loaded(held);
        kept++;
      }
    }
    refresh =
        new RefreshReport(
            RefreshReport.RUNNING,
            from,
            plan.snapshotId(),
            kept,
            next.size() - kept,
            0,
            seconds(),
            null);
    LOG.info(
        "Dataset '{}': refresh to snapshot {} keeps {} slices, loads {}",
        name,
        plan.snapshotId(),
        kept,
        next.size() - kept);
    dispatch(next, planning.loadsPerDataset());
    switchIfRefreshed();
    return this;
  }

  /** The report of a slice some kept version holds now, or null. */
  private SliceEntity.Loaded heldReport(String sliceId) {
    for (DatasetVersion version : versions()) {
      SliceEntity.Loaded report = version.heldReport(sliceId);
      if (report != null) {
        return report;
      }
    }
    return null;
  }

  /** Once a refresh's slices are all held, readers switch to it. */
  private void switchIfRefreshed() {
    if (next == null || !next.complete()) {
      return;
    }
    DatasetVersion replaced = current;
    String replacedFingerprint = fingerprint(replaced);
    current = next;
    next = null;
    int freed = 0;
    if (isHeld(replacedFingerprint)) {
      retained.put(replaced.snapshotId(), replaced);
    } else {
      freed = retire(replaced);
    }
    state = DatasetState.READY;
    writeRecord();
    RefreshReport running = refresh;
    LOG.info(
        "Dataset '{}' refreshed to snapshot {}: {} slices kept, {} loaded, {} to free, {} rows",
        name,
        current.snapshotId(),
        running.kept(),
        running.loaded(),
        freed,
        current.rows());
    finishRefresh(
        new RefreshReport(
            RefreshReport.DONE,
            running.fromSnapshot(),
            current.snapshotId(),
            running.kept(),
            running.loaded(),
            freed,
            seconds(),
            null));
  }

  private void finishRefresh(RefreshReport report) {
    refresh = report;
    LoadReply reply = new LoadReply.Answered(status());
    waitingForRefresh.forEach(w -> w.tell(reply));
    waitingForRefresh.clear();
  }

  private double seconds() {
    return (System.nanoTime() - refreshStartedNanos) / 1e9;
  }

  /** A refresh's new slice failed to load: the refresh fails, the dataset serves on. */
  private void failRefresh(Failure why) {
    DatasetVersion abandoned = next;
    next = null;
    retire(abandoned);
    LOG.warn("Dataset '{}': refresh failed ({}): {}", name, why.kind(), why.message());
    finishRefresh(
        new RefreshReport(
            RefreshReport.FAILED,
            refresh.fromSnapshot(),
            abandoned.snapshotId(),
            refresh.kept(),
            refresh.loaded(),
            0,
            seconds(),
            why));
  }

  private Behavior<Command> onRetainedPlanned(RetainedPlanned planned) {
    retainedPlanning.remove(planned.snapshotId());
    if (state == DatasetState.ABSENT || state == DatasetState.FAILED) {
      return this;
    }
    if (planned.failure() != null) {
      LOG.warn(
          "Dataset '{}': the layout of snapshot {}, kept for jobs, could not be planned again: {}",
          name,
          planned.snapshotId(),
          Failure.of(planned.failure()).message());
    } else {
      DatasetVersion version = new DatasetVersion(planned.plan());
      for (String sliceId : version.sliceIds()) {
        SliceEntity.Loaded held = heldReport(sliceId);
        if (held != null) {
          version.loaded(held);
        }
      }
      retained.put(version.snapshotId(), version);
      dispatch(version, Integer.MAX_VALUE);
    }
    answerWaitingSpecs();
    return this;
  }

  private Behavior<Command> onAskMissing() {
    for (DatasetVersion version : versions()) {
      for (SliceSpec slice : version.missingDispatched()) {
        sharding
            .entityRefFor(SliceEntity.TYPE_KEY, slice.sliceId())
            .tell(new SliceEntity.Load(slice, sliceReplies));
      }
    }
    return this;
  }

  /** Every version kept: serving, refreshing and retained. */
  private List<DatasetVersion> versions() {
    List<DatasetVersion> all = new ArrayList<>();
    if (current != null) {
      all.add(current);
    }
    if (next != null) {
      all.add(next);
    }
    all.addAll(retained.values());
    return all;
  }

  private void dispatch(DatasetVersion version, int inFlight) {
    for (SliceSpec slice : version.nextToDispatch(inFlight)) {
      sharding
          .entityRefFor(SliceEntity.TYPE_KEY, slice.sliceId())
          .tell(new SliceEntity.Load(slice, sliceReplies));
    }
  }

  private Behavior<Command> onGetSliceSpec(GetSliceSpec get) {
    if (state == DatasetState.PLANNING || !retainedPlanning.isEmpty()) {
      waitingForSpecs.add(get);
      return this;
    }
    SliceSpec slice = null;
    // Every slice of the layout being served has loaded once: one of them that asks is starting
    // again (a refresh's new slices belong to the layout still loading).
    boolean serving = state == DatasetState.READY || state == DatasetState.DEGRADED;
    boolean restart = false;
    for (DatasetVersion version : versions()) {
      if (slice == null) {
        slice = version.spec(get.sliceId());
        restart = slice != null && serving && version == current;
      }
      // The slice restarted somewhere (its node left or failed): missing until it reports.
      if (version.missing(get.sliceId()) && version == current && state == DatasetState.READY) {
        state = DatasetState.DEGRADED;
        LOG.info("Dataset '{}' DEGRADED: slice {} is reloading", name, get.sliceId());
      }
    }
    if (slice == null || state == DatasetState.FAILED) {
      LOG.debug(
          "Dataset '{}' ({}, generation {}) does not want slice {}",
          name,
          state,
          generation,
          get.sliceId());
      get.replyTo().tell(new SliceAssignment(null, null, false));
      return stopIfAbsent();
    }
    get.replyTo().tell(new SliceAssignment(slice, sliceReplies, restart));
    return this;
  }

  private void answerWaitingSpecs() {
    if (state == DatasetState.PLANNING || !retainedPlanning.isEmpty()) {
      return;
    }
    List<GetSliceSpec> waiting = new ArrayList<>(waitingForSpecs);
    waitingForSpecs.clear();
    waiting.forEach(this::onGetSliceSpec);
  }

  private Behavior<Command> onSliceReply(SliceReply reply) {
    String sliceId = reply.result().sliceId();
    if (!(state == DatasetState.LOADING
        || state == DatasetState.READY
        || state == DatasetState.DEGRADED)) {
      return this; // a reply from an earlier attempt
    }
    if (reply.result() instanceof SliceEntity.LoadFailed failed) {
      Failure why =
          new Failure(
              failed.failure().kind(),
              "slice " + failed.sliceId() + ": " + failed.failure().message());
      if (current.contains(sliceId)) {
        fail(why);
      } else if (next != null && next.contains(sliceId)) {
        failRefresh(why);
      }
      return this;
    }
    SliceEntity.Loaded loaded = (SliceEntity.Loaded) reply.result();
    for (DatasetVersion version : versions()) {
      version.loaded(loaded);
    }
    dispatch(current, planning.loadsPerDataset());
    if (next != null) {
      dispatch(next, planning.loadsPerDataset());
    }
    readyIfComplete();
    switchIfRefreshed();
    return this;
  }

  private void readyIfComplete() {
    if ((state == DatasetState.LOADING || state == DatasetState.DEGRADED) && current.complete()) {
      boolean first = state == DatasetState.LOADING;
      state = DatasetState.READY;
      if (secondsToReady == null) {
        secondsToReady = (System.nanoTime() - requestedAtNanos) / 1e9;
      }
      LOG.info(
          "Dataset '{}' READY{}: {} rows, {} bytes in {} slices, {} s",
          name,
          first ? "" : " again",
          current.rows(),
          current.bytes(),
          current.size(),
          String.format("%.2f", (System.nanoTime() - requestedAtNanos) / 1e9));
      reply(waitingForReady);
    } else if (state == DatasetState.LOADING && current.allKnown()) {
      // Every slice answered once, but one restarted meanwhile: rows are known, one is missing.
      state = DatasetState.DEGRADED;
    }
  }

  private void fail(Failure why) {
    state = DatasetState.FAILED;
    failure = why;
    LOG.warn("Dataset '{}' FAILED ({}): {}", name, why.kind(), why.message());
    releaseAll();
    forget();
    reply(waitingForPlan);
    reply(waitingForReady);
    reply(waitingForRefresh);
    waitingForSpecs.forEach(g -> g.replyTo().tell(new SliceAssignment(null, null, false)));
    waitingForSpecs.clear();
  }

  /** Frees every slice of every version now (drop or failure). */
  private void releaseAll() {
    Set<String> all = new LinkedHashSet<>(retiring);
    versions().forEach(version -> all.addAll(version.sliceIds()));
    all.forEach(this::release);
    retiring.clear();
    current = null;
    next = null;
    retained.clear();
    holders.clear();
  }

  private void release(String sliceId) {
    sharding.entityRefFor(SliceEntity.TYPE_KEY, sliceId).tell(new SliceEntity.Release());
  }

  /**
   * Schedules the slices of a replaced version that no kept version uses to be freed after the
   * retire linger; answers how many.
   */
  private int retire(DatasetVersion replaced) {
    List<String> unused = new ArrayList<>();
    for (String sliceId : replaced.sliceIds()) {
      if (!inUse(sliceId)) {
        unused.add(sliceId);
      }
    }
    if (!unused.isEmpty()) {
      retiring.addAll(unused);
      timers.startSingleTimer(
          new Object(), new ReleaseRetired(List.copyOf(unused)), planning.retireLinger());
    }
    return unused.size();
  }

  private boolean inUse(String sliceId) {
    for (DatasetVersion version : versions()) {
      if (version.contains(sliceId)) {
        return true;
      }
    }
    return false;
  }

  private Behavior<Command> onReleaseRetired(ReleaseRetired retire) {
    boolean changed = false;
    for (String sliceId : retire.sliceIds()) {
      // A later refresh may have taken the slice back (the same files again).
      if (retiring.remove(sliceId) && !inUse(sliceId)) {
        release(sliceId);
        changed = true;
      }
    }
    if (changed) {
      writeRecord();
    }
    return this;
  }

  private Behavior<Command> onHold(Hold hold) {
    if (state == DatasetState.ABSENT || state == DatasetState.FAILED) {
      return this;
    }
    Set<String> previous = holders.put(hold.job(), new HashSet<>(hold.fingerprints()));
    if (!new HashSet<>(hold.fingerprints()).equals(previous)) {
      pruneRetained();
      writeRecord();
    }
    return this;
  }

  private Behavior<Command> onUnhold(Unhold unhold) {
    if (holders.remove(unhold.job()) != null) {
      pruneRetained();
      writeRecord();
    }
    return this;
  }

  /** Retires the kept versions no job holds any more. */
  private void pruneRetained() {
    for (DatasetVersion version : new ArrayList<>(retained.values())) {
      String fingerprint = fingerprint(version);
      if (fingerprint != null && !isHeld(fingerprint)) {
        retained.remove(version.snapshotId());
        int freed = retire(version);
        LOG.info(
            "Dataset '{}': layout of snapshot {} no longer read by any job; {} slices to free",
            name,
            version.snapshotId(),
            freed);
      }
    }
  }

  private boolean isHeld(String fingerprint) {
    for (Set<String> held : holders.values()) {
      if (held.contains(fingerprint)) {
        return true;
      }
    }
    return false;
  }

  /** A version's layout fingerprint, once every slice answered; else null. */
  private String fingerprint(DatasetVersion version) {
    return version != null && version.allKnown()
        ? version.layout(name, spec.filter()).fingerprint()
        : null;
  }

  /** Removes the record, so the entity does not recover after a move. */
  private void forget() {
    updateDirectory(map -> DatasetDirectory.remove(map, selfAddress, name));
  }

  private void writeRecord() {
    if (current == null) {
      return;
    }
    Map<String, List<String>> held = new LinkedHashMap<>();
    holders.forEach((job, fps) -> held.put(job, List.copyOf(fps)));
    Set<Long> kept = new LinkedHashSet<>(retained.keySet());
    kept.addAll(retainedPlanning);
    DatasetRecord record =
        new DatasetRecord(
            spec, generation, current.snapshotId(), List.copyOf(kept), held, List.copyOf(retiring));
    updateDirectory(map -> DatasetDirectory.put(map, selfAddress, record));
  }

  private void updateDirectory(
      java.util.function.Function<LWWMap<String, DatasetRecord>, LWWMap<String, DatasetRecord>>
          change) {
    replicator.askUpdate(
        askReplyTo ->
            new Replicator.Update<>(
                DatasetDirectory.KEY,
                LWWMap.empty(),
                DatasetDirectory.write(),
                askReplyTo,
                change::apply),
        response -> new RecordWritten(response.getClass().getSimpleName()));
  }

  private void reply(List<ActorRef<LoadReply>> waiters) {
    LoadReply reply = LoadReply.of(status(), failure);
    waiters.forEach(w -> w.tell(reply));
    waiters.clear();
  }

  private Behavior<Command> onGetStatus(GetStatus get) {
    get.replyTo().tell(status());
    return stopIfAbsent();
  }

  private Behavior<Command> onGetLayout(GetLayout get) {
    if (state != DatasetState.READY && state != DatasetState.DEGRADED) {
      get.replyTo().tell(new LayoutReply(null, status()));
      return stopIfAbsent();
    }
    DatasetVersion version = current;
    if (get.fingerprint() != null && !get.fingerprint().equals(fingerprint(current))) {
      version = null;
      for (DatasetVersion kept : retained.values()) {
        if (get.fingerprint().equals(fingerprint(kept))) {
          version = kept;
        }
      }
    }
    get.replyTo()
        .tell(
            new LayoutReply(
                version == null ? null : version.layout(name, spec.filter()), status()));
    return this;
  }

  private Behavior<Command> onDrop(Drop drop) {
    if (state == DatasetState.ABSENT) {
      drop.replyTo().tell(status());
      return stopIfAbsent();
    }
    DatasetStatus last = status();
    releaseAll();
    forget();
    failure = new Failure(FailureKind.DATASET_NOT_FOUND, "dataset '" + name + "' was dropped");
    reply(waitingForPlan);
    reply(waitingForReady);
    reply(waitingForRefresh);
    state = DatasetState.ABSENT;
    refresh = null;
    LOG.info("Dataset '{}' dropped", name);
    drop.replyTo().tell(last);
    return stopIfAbsent();
  }

  /**
   * An entity with nothing loaded leaves: it asks its shard to passivate it, which (with remember
   * entities) also keeps it from being restarted.
   */
  private Behavior<Command> stopIfAbsent() {
    if (state == DatasetState.ABSENT) {
      entity.getShard().tell(new ClusterSharding.Passivate<>(getContext().getSelf()));
    }
    return this;
  }

  private DatasetStatus status() {
    if (state == DatasetState.ABSENT) {
      return DatasetStatus.absent(name);
    }
    List<DatasetStatus.RetainedLayout> kept = new ArrayList<>();
    for (DatasetVersion version : retained.values()) {
      String fingerprint = fingerprint(version);
      List<String> heldBy = new ArrayList<>();
      holders.forEach(
          (job, fps) -> {
            if (fingerprint != null && fps.contains(fingerprint)) {
              heldBy.add(job);
            }
          });
      kept.add(
          new DatasetStatus.RetainedLayout(
              version.snapshotId(), fingerprint, version.size(), version.rows(), heldBy));
    }
    return new DatasetStatus(
        name,
        current == null ? null : current.plan().source(),
        state,
        current == null ? 0 : current.presentCount(),
        current == null ? 0 : current.size(),
        current == null ? 0 : current.rows(),
        current == null ? 0 : current.bytes(),
        current == null ? null : current.snapshotId(),
        failure,
        secondsToReady,
        current == null ? null : current.decoders(),
        refresh,
        kept);
  }
}
