package io.floe.dataset;

import io.floe.ddata.RecordReads;
import io.floe.iceberg.ScanPlan;
import io.floe.node.NodeResources;
import io.floe.serialization.CborSerializable;
import io.floe.slice.SliceEntity;
import io.floe.slice.SliceSpec;
import io.floe.table.TableSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
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
 * <p>Surviving nodes that come and go: its record (spec, generation, pinned snapshot) is replicated
 * in Distributed Data and the entity is remembered, so after its node fails it restarts elsewhere,
 * re-plans the same slices and gathers them again (LOADING until every slice has answered). A slice
 * that restarts on another node (rebalance, crash) asks for its spec; the dataset then shows
 * DEGRADED with that slice missing until it reports loaded from its new holder.
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

  public record GetLayout(ActorRef<LayoutReply> replyTo) implements Command {}

  public record Drop(ActorRef<DatasetStatus> replyTo) implements Command {}

  /** From a slice entity that (re)started without a spec: which slice am I, whom do I report to? */
  public record GetSliceSpec(String sliceId, ActorRef<SliceAssignment> replyTo)
      implements Command {}

  /** Stop for a hand-off or shutdown; the record stays, so the entity recovers where it lands. */
  public record Stop() implements Command {}

  private record Planned(ScanPlan plan, Throwable failure) implements Command {}

  private record SliceReply(SliceEntity.LoadResult result) implements Command {}

  private record RecordRead(DatasetRecord record, boolean failed, boolean local)
      implements Command {}

  private record RecordWritten(String outcome) implements Command {}

  /** Ask missing slices again: sharding delivers at most once, and hand-offs can drop a message. */
  private record AskMissing() implements Command {}

  /** The answer to a load: the status so far, or why the load was refused or failed. */
  public record LoadReply(DatasetStatus status, Failure failure) implements CborSerializable {}

  /** The layout of a READY (or DEGRADED) dataset, or its status when it has none. */
  public record LayoutReply(DatasetLayout layout, DatasetStatus status)
      implements CborSerializable {}

  /** A slice's spec and where to report its load, or a null spec when the slice is not wanted. */
  public record SliceAssignment(SliceSpec spec, ActorRef<SliceEntity.LoadResult> reportTo)
      implements CborSerializable {}

  public static void init(ActorSystem<?> system, NodeResources resources) {
    // Start this node's replicator now: it is created lazily, and a node without one neither
    // takes part in majority writes nor keeps a copy of the dataset records.
    DistributedData.get(system);
    ClusterSharding.get(system)
        .init(
            Entity.of(TYPE_KEY, ctx -> create(ctx, resources))
                .withStopMessage(new Stop())
                .withSettings(ClusterShardingSettings.create(system).withRememberEntities(true)));
  }

  static Behavior<Command> create(EntityContext<Command> entity, NodeResources resources) {
    return Behaviors.withTimers(
        timers -> {
          timers.startTimerWithFixedDelay(new AskMissing(), ASK_MISSING_EVERY);
          return createWithTimers(entity, resources);
        });
  }

  private static Behavior<Command> createWithTimers(
      EntityContext<Command> entity, NodeResources resources) {
    return Behaviors.setup(
        ctx ->
            Behaviors.withStash(
                STASH_CAPACITY,
                stash ->
                    DistributedData.withReplicatorMessageAdapter(
                        (ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>>
                                replicator) ->
                            recover(ctx, entity, resources, stash, replicator))));
  }

  /** Reads this dataset's record (if any) before taking messages, stashing them meanwhile. */
  private static Behavior<Command> recover(
      ActorContext<Command> ctx,
      EntityContext<Command> entity,
      NodeResources resources,
      StashBuffer<Command> stash,
      ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator) {
    String name = entity.getEntityId();
    askRecord(replicator, name, DatasetDirectory.read());
    return Behaviors.receive(Command.class)
        .onMessage(
            RecordRead.class,
            read -> {
              if (read.failed() && !read.local()) {
                // No majority answered (nodes starting or leaving): this node's replica, which
                // gossip keeps close to the others, is better than starting empty.
                askRecord(replicator, name, Replicator.readLocal());
                return Behaviors.same();
              }
              if (read.failed()) {
                LOG.warn("Dataset '{}': its record could not be read; starting empty", name);
              } else {
                LOG.info(
                    "Dataset '{}' entity started {}",
                    name,
                    read.record() == null ? "with no record" : "from its record");
              }
              DatasetEntity entityBehavior =
                  new DatasetEntity(ctx, entity, resources, replicator, read.record());
              return stash.unstashAll(entityBehavior);
            })
        .onMessage(
            Command.class,
            message -> {
              stash.stash(message);
              return Behaviors.same();
            })
        .build();
  }

  private static void askRecord(
      ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator,
      String name,
      Replicator.ReadConsistency consistency) {
    RecordReads.ask(replicator, DatasetDirectory.KEY, name, consistency, RecordRead::new);
  }

  private final String name;
  private final EntityContext<Command> entity;
  private final NodeResources resources;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator;
  private final SelfUniqueAddress selfAddress;
  private final ClusterSharding sharding;
  private final ActorRef<SliceEntity.LoadResult> sliceReplies;
  private final List<ActorRef<LoadReply>> waitingForPlan = new ArrayList<>();
  private final List<ActorRef<LoadReply>> waitingForReady = new ArrayList<>();
  private final List<GetSliceSpec> waitingForSpecs = new ArrayList<>();

  private DatasetState state = DatasetState.ABSENT;
  private DatasetSpec spec;
  private long generation;
  private long requestedAtNanos;
  private double secondsToReady = -1;
  private Failure failure;
  private ScanPlan plan;
  private final Map<String, Integer> sliceIndex = new HashMap<>();

  /** The last report of each slice; kept while it reloads so its row count stays known. */
  private SliceEntity.Loaded[] known = new SliceEntity.Loaded[0];

  private boolean[] present = new boolean[0];
  private int knownCount;
  private int presentCount;
  private int dispatched;

  private DatasetEntity(
      ActorContext<Command> context,
      EntityContext<Command> entity,
      NodeResources resources,
      ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator,
      DatasetRecord record) {
    super(context);
    this.name = entity.getEntityId();
    this.entity = entity;
    this.resources = resources;
    this.replicator = replicator;
    this.selfAddress = DistributedData.get(context.getSystem()).selfUniqueAddress();
    this.sharding = ClusterSharding.get(context.getSystem());
    this.sliceReplies = context.messageAdapter(SliceEntity.LoadResult.class, SliceReply::new);
    if (record != null) {
      LOG.info("Dataset '{}': recovering generation {}", name, record.generation());
      spec = record.spec();
      start(record.pinnedSpec(), record.generation());
    }
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Load.class, this::onLoad)
        .onMessage(Planned.class, this::onPlanned)
        .onMessage(SliceReply.class, this::onSliceReply)
        .onMessage(GetSliceSpec.class, this::onGetSliceSpec)
        .onMessage(GetStatus.class, this::onGetStatus)
        .onMessage(GetLayout.class, this::onGetLayout)
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
          .tell(new LoadReply(status(), new Failure(FailureKind.ALREADY_EXISTS, message)));
      return this;
    }
    if (load.untilReady() && (state == DatasetState.PLANNING || state == DatasetState.LOADING)) {
      waitingForReady.add(load.replyTo());
    } else if (state == DatasetState.PLANNING) {
      waitingForPlan.add(load.replyTo());
    } else {
      load.replyTo().tell(new LoadReply(status(), failure));
    }
    return this;
  }

  /** Plans {@code toPlan} (the spec, pinned to a snapshot when recovering) under a generation. */
  private void start(DatasetSpec toPlan, long newGeneration) {
    generation = newGeneration;
    state = DatasetState.PLANNING;
    failure = null;
    plan = null;
    secondsToReady = -1;
    requestedAtNanos = System.nanoTime();
    LOG.info("Dataset '{}': planning {}", name, toPlan.table());
    CompletableFuture<ScanPlan> planning =
        CompletableFuture.supplyAsync(
            () -> {
              TableSource source = resources.tables().resolve(toPlan.table(), toPlan.catalog());
              return resources
                  .planner()
                  .plan(source, resources.tables().open(source), toPlan, newGeneration);
            },
            resources.loadExecutor());
    getContext().pipeToSelf(planning, Planned::new);
  }

  private Behavior<Command> onPlanned(Planned planned) {
    if (state != DatasetState.PLANNING) {
      return this; // dropped while planning
    }
    if (planned.failure() != null) {
      fail(Failure.of(planned.failure()));
      return this;
    }
    plan = planned.plan();
    List<SliceSpec> slices = plan.slices();
    known = new SliceEntity.Loaded[slices.size()];
    present = new boolean[slices.size()];
    sliceIndex.clear();
    for (int i = 0; i < slices.size(); i++) {
      sliceIndex.put(slices.get(i).sliceId(), i);
    }
    dispatched = 0;
    knownCount = 0;
    presentCount = 0;
    state = DatasetState.LOADING;
    LOG.info("Dataset '{}': snapshot {}, {} slices", name, plan.snapshotId(), slices.size());
    DatasetRecord record = new DatasetRecord(spec, generation, plan.snapshotId());
    updateDirectory(map -> DatasetDirectory.put(map, selfAddress, record));
    getContext()
        .getSystem()
        .receptionist()
        .tell(Receptionist.register(LOADED, getContext().getSelf()));
    reply(waitingForPlan);
    waitingForSpecs.forEach(this::onGetSliceSpec);
    waitingForSpecs.clear();
    dispatchLoads();
    readyIfComplete();
    return this;
  }

  private Behavior<Command> onAskMissing() {
    if (plan != null && (state == DatasetState.LOADING || state == DatasetState.DEGRADED)) {
      for (int i = 0; i < dispatched; i++) {
        if (!present[i]) {
          SliceSpec slice = plan.slices().get(i);
          sharding
              .entityRefFor(SliceEntity.TYPE_KEY, slice.sliceId())
              .tell(new SliceEntity.Load(slice, sliceReplies));
        }
      }
    }
    return this;
  }

  private void dispatchLoads() {
    List<SliceSpec> slices = plan.slices();
    while (dispatched < slices.size() && dispatched - knownCount < resources.loadsPerDataset()) {
      SliceSpec slice = slices.get(dispatched++);
      sharding
          .entityRefFor(SliceEntity.TYPE_KEY, slice.sliceId())
          .tell(new SliceEntity.Load(slice, sliceReplies));
    }
  }

  private Behavior<Command> onGetSliceSpec(GetSliceSpec get) {
    if (state == DatasetState.PLANNING) {
      waitingForSpecs.add(get);
      return this;
    }
    Integer index = sliceIndex.get(get.sliceId());
    if (index == null || plan == null || state == DatasetState.FAILED) {
      LOG.debug(
          "Dataset '{}' ({}, generation {}) does not want slice {}",
          name,
          state,
          generation,
          get.sliceId());
      get.replyTo().tell(new SliceAssignment(null, null));
      return stopIfAbsent();
    }
    if (present[index]) {
      // The slice restarted somewhere (its node left or failed): it is missing until it reports.
      present[index] = false;
      presentCount--;
      if (state == DatasetState.READY) {
        state = DatasetState.DEGRADED;
        LOG.info("Dataset '{}' DEGRADED: slice {} is reloading", name, get.sliceId());
      }
    }
    get.replyTo().tell(new SliceAssignment(plan.slices().get(index), sliceReplies));
    return this;
  }

  private Behavior<Command> onSliceReply(SliceReply reply) {
    Integer index = sliceIndex.get(reply.result().sliceId());
    if (index == null
        || !(state == DatasetState.LOADING
            || state == DatasetState.READY
            || state == DatasetState.DEGRADED)) {
      return this; // a reply from an earlier attempt
    }
    if (reply.result() instanceof SliceEntity.LoadFailed) {
      SliceEntity.LoadFailed failed = (SliceEntity.LoadFailed) reply.result();
      fail(
          new Failure(
              failed.failure().kind(),
              "slice " + failed.sliceId() + ": " + failed.failure().message()));
      return this;
    }
    SliceEntity.Loaded loaded = (SliceEntity.Loaded) reply.result();
    if (known[index] == null) {
      knownCount++;
    }
    known[index] = loaded;
    if (!present[index]) {
      present[index] = true;
      presentCount++;
    }
    dispatchLoads();
    readyIfComplete();
    return this;
  }

  private void readyIfComplete() {
    if ((state == DatasetState.LOADING || state == DatasetState.DEGRADED)
        && presentCount == known.length) {
      boolean first = state == DatasetState.LOADING;
      state = DatasetState.READY;
      if (secondsToReady < 0) {
        secondsToReady = (System.nanoTime() - requestedAtNanos) / 1e9;
      }
      DatasetStatus status = status();
      LOG.info(
          "Dataset '{}' READY{}: {} rows, {} bytes in {} slices, {} s",
          name,
          first ? "" : " again",
          status.rows(),
          status.bytes(),
          known.length,
          String.format("%.2f", (System.nanoTime() - requestedAtNanos) / 1e9));
      reply(waitingForReady);
    } else if (state == DatasetState.LOADING && knownCount == known.length) {
      // Every slice answered once, but one restarted meanwhile: rows are known, one is missing.
      state = DatasetState.DEGRADED;
    }
  }

  private void fail(Failure why) {
    state = DatasetState.FAILED;
    failure = why;
    LOG.warn("Dataset '{}' FAILED ({}): {}", name, why.kind(), why.message());
    releaseSlices();
    forget();
    reply(waitingForPlan);
    reply(waitingForReady);
    waitingForSpecs.forEach(g -> g.replyTo().tell(new SliceAssignment(null, null)));
    waitingForSpecs.clear();
  }

  private void releaseSlices() {
    if (plan == null) {
      return;
    }
    for (SliceSpec slice : plan.slices()) {
      sharding.entityRefFor(SliceEntity.TYPE_KEY, slice.sliceId()).tell(new SliceEntity.Release());
    }
    known = new SliceEntity.Loaded[0];
    present = new boolean[0];
    sliceIndex.clear();
    dispatched = 0;
    knownCount = 0;
    presentCount = 0;
  }

  /** Removes the record, so the entity does not recover after a move. */
  private void forget() {
    updateDirectory(map -> DatasetDirectory.remove(map, selfAddress, name));
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
    LoadReply reply = new LoadReply(status(), failure);
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
    List<DatasetLayout.SliceRows> rows = new ArrayList<>(known.length);
    for (SliceEntity.Loaded slice : known) {
      rows.add(
          new DatasetLayout.SliceRows(
              slice.sliceId(), slice.rows(), slice.bytes(), slice.holder()));
    }
    get.replyTo()
        .tell(
            new LayoutReply(
                new DatasetLayout(
                    name, plan.snapshotId(), spec.filter(), plan.arrowSchemaJson(), rows),
                status()));
    return this;
  }

  private Behavior<Command> onDrop(Drop drop) {
    if (state == DatasetState.ABSENT) {
      drop.replyTo().tell(status());
      return stopIfAbsent();
    }
    DatasetStatus last = status();
    releaseSlices();
    forget();
    failure = new Failure(FailureKind.NOT_FOUND, "dataset '" + name + "' was dropped");
    reply(waitingForPlan);
    reply(waitingForReady);
    state = DatasetState.ABSENT;
    plan = null;
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
    long rows = 0;
    long bytes = 0;
    for (int i = 0; i < known.length; i++) {
      if (known[i] != null && present[i]) {
        rows += known[i].rows();
        bytes += known[i].bytes();
      }
    }
    int total = plan == null ? 0 : plan.slices().size();
    return new DatasetStatus(
        name,
        plan == null ? null : plan.source(),
        state,
        presentCount,
        total,
        rows,
        bytes,
        plan == null ? -1 : plan.snapshotId(),
        failure,
        secondsToReady);
  }
}
