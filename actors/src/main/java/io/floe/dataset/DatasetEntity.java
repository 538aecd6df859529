package io.floe.dataset;

import io.floe.iceberg.ScanPlan;
import io.floe.node.NodeResources;
import io.floe.serialization.CborSerializable;
import io.floe.slice.SliceEntity;
import io.floe.slice.SliceSpec;
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
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/**
 * One loaded dataset, placed by cluster sharding under its name. It plans the scan on the load
 * threads, asks its slice entities to load with bounded concurrency, and tracks PLANNING → LOADING
 * k/n → READY (or FAILED with the reason, after releasing every slice it loaded). Once READY it
 * answers the layout (slice row counts, whose prefix sums are the global row index) that the
 * gateway plans reads with. Loaded datasets register with the receptionist so any node can list
 * them.
 */
public final class DatasetEntity extends AbstractBehavior<DatasetEntity.Command> {
  public static final EntityTypeKey<Command> TYPE_KEY =
      EntityTypeKey.create(Command.class, "floe-dataset");

  /** Every loaded dataset entity, cluster-wide, for {@code list}. */
  public static final ServiceKey<Command> LOADED =
      ServiceKey.create(Command.class, "floe-datasets");

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

  private record Planned(ScanPlan plan, Throwable failure) implements Command {}

  private record SliceReply(SliceEntity.LoadResult result) implements Command {}

  /** The answer to a load: the status so far, or why the load was refused or failed. */
  public record LoadReply(DatasetStatus status, Failure failure) implements CborSerializable {}

  /** The layout of a READY dataset, or its status when it is not READY. */
  public record LayoutReply(DatasetLayout layout, DatasetStatus status)
      implements CborSerializable {}

  public static void init(ActorSystem<?> system, NodeResources resources) {
    ClusterSharding.get(system)
        .init(Entity.of(TYPE_KEY, ctx -> create(ctx.getEntityId(), resources)));
  }

  static Behavior<Command> create(String name, NodeResources resources) {
    return Behaviors.setup(ctx -> new DatasetEntity(ctx, name, resources));
  }

  private final String name;
  private final NodeResources resources;
  private final ClusterSharding sharding;
  private final ActorRef<SliceEntity.LoadResult> sliceReplies;
  private final List<ActorRef<LoadReply>> waitingForPlan = new ArrayList<>();
  private final List<ActorRef<LoadReply>> waitingForReady = new ArrayList<>();

  private DatasetState state = DatasetState.ABSENT;
  private DatasetSpec spec;
  private long requestedAtNanos;
  private double secondsToReady = -1;
  private Failure failure;
  private ScanPlan plan;
  private final Map<String, Integer> sliceIndex = new HashMap<>();
  private SliceEntity.Loaded[] loaded = new SliceEntity.Loaded[0];
  private int dispatched;
  private int loadedCount;

  private DatasetEntity(ActorContext<Command> context, String name, NodeResources resources) {
    super(context);
    this.name = name;
    this.resources = resources;
    this.sharding = ClusterSharding.get(context.getSystem());
    this.sliceReplies = context.messageAdapter(SliceEntity.LoadResult.class, SliceReply::new);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Load.class, this::onLoad)
        .onMessage(Planned.class, this::onPlanned)
        .onMessage(SliceReply.class, this::onSliceReply)
        .onMessage(GetStatus.class, this::onGetStatus)
        .onMessage(GetLayout.class, this::onGetLayout)
        .onMessage(Drop.class, this::onDrop)
        .build();
  }

  private Behavior<Command> onLoad(Load load) {
    if (state == DatasetState.ABSENT || state == DatasetState.FAILED) {
      start(load.spec());
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

  private void start(DatasetSpec newSpec) {
    spec = newSpec;
    state = DatasetState.PLANNING;
    failure = null;
    plan = null;
    secondsToReady = -1;
    requestedAtNanos = System.nanoTime();
    long generation = System.currentTimeMillis();
    getContext().getLog().info("Dataset '{}': planning {}", name, spec.table());
    CompletableFuture<ScanPlan> planning =
        CompletableFuture.supplyAsync(
            () ->
                resources
                    .planner()
                    .plan(resources.tables().open(newSpec.table()), newSpec, generation),
            resources.loadExecutor());
    getContext().pipeToSelf(planning, Planned::new);
  }

  private Behavior<Command> onPlanned(Planned planned) {
    if (planned.failure() != null) {
      fail(Failure.of(planned.failure()));
      return this;
    }
    plan = planned.plan();
    List<SliceSpec> slices = plan.slices();
    loaded = new SliceEntity.Loaded[slices.size()];
    sliceIndex.clear();
    for (int i = 0; i < slices.size(); i++) {
      sliceIndex.put(slices.get(i).sliceId(), i);
    }
    dispatched = 0;
    loadedCount = 0;
    state = DatasetState.LOADING;
    getContext()
        .getLog()
        .info("Dataset '{}': snapshot {}, {} slices", name, plan.snapshotId(), slices.size());
    getContext()
        .getSystem()
        .receptionist()
        .tell(Receptionist.register(LOADED, getContext().getSelf()));
    reply(waitingForPlan);
    dispatchLoads();
    readyIfComplete();
    return this;
  }

  private void dispatchLoads() {
    List<SliceSpec> slices = plan.slices();
    while (dispatched < slices.size() && dispatched - loadedCount < resources.loadsPerDataset()) {
      SliceSpec slice = slices.get(dispatched++);
      sharding
          .entityRefFor(SliceEntity.TYPE_KEY, slice.sliceId())
          .tell(new SliceEntity.Load(slice, sliceReplies));
    }
  }

  private Behavior<Command> onSliceReply(SliceReply reply) {
    Integer index = sliceIndex.get(reply.result().sliceId());
    if (index == null || state != DatasetState.LOADING) {
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
    if (loaded[index] == null) {
      loaded[index] = (SliceEntity.Loaded) reply.result();
      loadedCount++;
    }
    dispatchLoads();
    readyIfComplete();
    return this;
  }

  private void readyIfComplete() {
    if (state == DatasetState.LOADING && loadedCount == loaded.length) {
      state = DatasetState.READY;
      secondsToReady = (System.nanoTime() - requestedAtNanos) / 1e9;
      DatasetStatus status = status();
      getContext()
          .getLog()
          .info(
              "Dataset '{}' READY: {} rows, {} bytes in {} slices, {} s",
              name,
              status.rows(),
              status.bytes(),
              loaded.length,
              String.format("%.2f", secondsToReady));
      reply(waitingForReady);
    }
  }

  private void fail(Failure why) {
    state = DatasetState.FAILED;
    failure = why;
    getContext().getLog().warn("Dataset '{}' FAILED ({}): {}", name, why.kind(), why.message());
    releaseSlices();
    reply(waitingForPlan);
    reply(waitingForReady);
  }

  private void releaseSlices() {
    if (plan == null) {
      return;
    }
    for (int i = 0; i < dispatched; i++) {
      sharding
          .entityRefFor(SliceEntity.TYPE_KEY, plan.slices().get(i).sliceId())
          .tell(new SliceEntity.Release());
    }
    loaded = new SliceEntity.Loaded[0];
    sliceIndex.clear();
    dispatched = 0;
    loadedCount = 0;
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
    if (state != DatasetState.READY) {
      get.replyTo().tell(new LayoutReply(null, status()));
      return stopIfAbsent();
    }
    List<DatasetLayout.SliceRows> rows = new ArrayList<>(loaded.length);
    for (SliceEntity.Loaded slice : loaded) {
      rows.add(
          new DatasetLayout.SliceRows(
              slice.sliceId(), slice.rows(), slice.bytes(), slice.holder()));
    }
    get.replyTo()
        .tell(
            new LayoutReply(
                new DatasetLayout(name, plan.snapshotId(), plan.arrowSchemaJson(), rows),
                status()));
    return this;
  }

  private Behavior<Command> onDrop(Drop drop) {
    if (state == DatasetState.ABSENT) {
      drop.replyTo().tell(status());
      return Behaviors.stopped();
    }
    DatasetStatus last = status();
    releaseSlices();
    failure = new Failure(FailureKind.NOT_FOUND, "dataset '" + name + "' was dropped");
    reply(waitingForPlan);
    reply(waitingForReady);
    getContext().getLog().info("Dataset '{}' dropped", name);
    drop.replyTo().tell(last);
    return Behaviors.stopped();
  }

  /** Entities created by a query for an unknown name leave at once. */
  private Behavior<Command> stopIfAbsent() {
    return state == DatasetState.ABSENT ? Behaviors.stopped() : this;
  }

  private DatasetStatus status() {
    if (state == DatasetState.ABSENT) {
      return DatasetStatus.absent(name);
    }
    long rows = 0;
    long bytes = 0;
    for (SliceEntity.Loaded slice : loaded) {
      if (slice != null) {
        rows += slice.rows();
        bytes += slice.bytes();
      }
    }
    int total = plan == null ? 0 : plan.slices().size();
    return new DatasetStatus(
        name,
        state,
        loadedCount,
        total,
        rows,
        bytes,
        plan == null ? -1 : plan.snapshotId(),
        failure,
        secondsToReady);
  }
}
