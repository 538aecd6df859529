package io.floe.dataset;

import io.floe.iceberg.SliceLoadListener;
import io.floe.iceberg.SliceSpec;
import io.floe.resources.SliceHosting;
import io.floe.serialization.CborSerializable;
import io.floe.store.LoadedSlice;
import io.floe.store.SliceStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityContext;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/**
 * One slice of one dataset, placed by cluster sharding. It decodes its rows into this node's Arrow
 * memory on the load threads and registers them in the node's {@link SliceStore}, where the gateway
 * streams them from.
 *
 * <p>Slices are remembered entities: when their node leaves or fails, sharding restarts them on
 * another node, where they ask their dataset for their spec and load again. When a slice moves away
 * from a node that stays up (a rebalance), the old copy keeps serving readers that planned against
 * it for {@code retireLinger} before its memory is freed, so planned moves do not interrupt reads;
 * on drop, failure or node shutdown the memory is freed at once. A stop that races a running load
 * frees that load's result as soon as it completes.
 */
public final class SliceEntity extends AbstractBehavior<SliceEntity.Command> {
  public static final EntityTypeKey<Command> TYPE_KEY =
      EntityTypeKey.create(Command.class, "floe-slice");

  /** Messages a slice entity takes. */
  public sealed interface Command extends CborSerializable {}

  /** Load the slice (idempotent); the reply comes once it is held or has failed. */
  public record Load(SliceSpec spec, ActorRef<LoadResult> replyTo) implements Command {}

  /** Free the slice's memory and leave: its dataset was dropped or failed. */
  public record Release() implements Command {}

  /** Stop for a shard hand-off, passivation or node shutdown. */
  public record Stop() implements Command {}

  private record Assigned(DatasetEntity.SliceAssignment assignment) implements Command {}

  private record AskSpecIfUnknown() implements Command {}

  private record LoadCompleted(LoadedSlice slice, Throwable failure) implements Command {}

  /** The outcome of a load. */
  public sealed interface LoadResult extends CborSerializable {
    String sliceId();
  }

  /**
   * @param copy which copy of the slice this is ({@link SliceCopies}): 0 for the first
   * @param holder the Flight location (URI) of the node holding this copy
   */
  public record Loaded(
      String sliceId, int copy, long rows, long bytes, String holder, String decoder)
      implements LoadResult {}

  public record LoadFailed(String sliceId, Failure failure) implements LoadResult {}

  public static void init(ActorSystem<?> system, SliceHosting hosting) {
    ClusterShardingSettings settings =
        ClusterShardingSettings.create(system).withRememberEntities(true);
    com.typesafe.config.Config least =
        system
            .settings()
            .config()
            .getConfig("pekko.cluster.sharding.least-shard-allocation-strategy");
    int absoluteLimit = least.getInt("rebalance-absolute-limit");
    ClusterSharding.get(system)
        .init(
            Entity.of(TYPE_KEY, ctx -> create(ctx, hosting))
                .withStopMessage(new Stop())
                .withSettings(settings)
                .withMessageExtractor(new SliceShards(settings.numberOfShards()))
                .withAllocationStrategy(
                    new SeparatedCopies(
                        org.apache.pekko.cluster.sharding.ShardCoordinator.ShardAllocationStrategy$
                            .MODULE$
                            .leastShardAllocationStrategy(
                                absoluteLimit, least.getDouble("rebalance-relative-limit")),
                        absoluteLimit)));
  }

  static Behavior<Command> create(EntityContext<Command> entity, SliceHosting hosting) {
    // Every line this entity logs carries its slice and dataset (fields of JSON logs).
    return Behaviors.withMdc(
        Command.class,
        java.util.Map.of("slice", entity.getEntityId(), "dataset", datasetOf(entity.getEntityId())),
        Behaviors.setup(ctx -> new SliceEntity(ctx, entity, hosting)));
  }

  /** The dataset a slice id belongs to: ids are {@code dataset/generation/index}. */
  static String datasetOf(String sliceId) {
    return sliceId.substring(0, sliceId.indexOf('/'));
  }

  /** The slice this entity holds a copy of. */
  private final String sliceId;

  private final String entityId;
  private final int copy;
  private final EntityContext<Command> entity;
  private final SliceHosting hosting;
  private final Holder holder;
  private final List<ActorRef<LoadResult>> waiting = new ArrayList<>();
  private SliceSpec spec;
  private LoadResult result;
  private boolean released;

  /** Why and since when the slice is loading (for the load listener). */
  private SliceLoadListener.Cause cause = SliceLoadListener.Cause.REQUESTED;

  private long loadStarted;

  private SliceEntity(
      ActorContext<Command> context, EntityContext<Command> entity, SliceHosting hosting) {
    super(context);
    this.entityId = entity.getEntityId();
    this.sliceId = SliceCopies.sliceOf(entityId);
    this.copy = SliceCopies.copyOf(entityId);
    this.entity = entity;
    this.hosting = hosting;
    this.holder = new Holder(hosting.store());
    // Sharding delivers the message the entity started for before this one: a slice started by
    // its dataset's Load knows its spec by then, and only one started without it (its node left
    // or failed, remembered entities restarted it) asks the dataset.
    context.getSelf().tell(new AskSpecIfUnknown());
  }

  private Behavior<Command> onAskSpecIfUnknown() {
    if (spec == null && !released) {
      ClusterSharding.get(getContext().getSystem())
          .entityRefFor(DatasetEntity.TYPE_KEY, datasetOf(sliceId))
          .tell(
              new DatasetEntity.GetSliceSpec(
                  entityId,
                  getContext().messageAdapter(DatasetEntity.SliceAssignment.class, Assigned::new)));
    }
    return this;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Load.class, this::onLoad)
        .onMessage(AskSpecIfUnknown.class, m -> onAskSpecIfUnknown())
        .onMessage(Assigned.class, this::onAssigned)
        .onMessage(LoadCompleted.class, this::onLoadCompleted)
        .onMessage(Release.class, m -> onRelease())
        .onMessage(Stop.class, m -> Behaviors.stopped())
        .onSignal(PostStop.class, s -> onPostStop())
        .build();
  }

  private Behavior<Command> onAssigned(Assigned assigned) {
    if (!(assigned.assignment() instanceof DatasetEntity.SliceAssignment.Assigned assignment)) {
      getContext().getLog().debug("Slice {} is not wanted by its dataset; leaving", entityId);
      return onRelease();
    }
    return load(
        new Load(assignment.spec(), assignment.reportTo()),
        assignment.restart() ? SliceLoadListener.Cause.MOVED : SliceLoadListener.Cause.REQUESTED);
  }

  private Behavior<Command> onLoad(Load load) {
    return load(load, SliceLoadListener.Cause.REQUESTED);
  }

  private Behavior<Command> load(Load load, SliceLoadListener.Cause why) {
    if (released) {
      return this;
    }
    if (result != null) {
      load.replyTo().tell(result);
      return this;
    }
    waiting.add(load.replyTo());
    if (spec == null) {
      spec = load.spec();
      cause = why;
      loadStarted = System.nanoTime();
      SliceSpec toLoad = spec;
      getContext().getLog().debug("Loading slice {}", entityId);
      CompletableFuture<LoadedSlice> future =
          CompletableFuture.supplyAsync(
              () -> holder.offer(hosting.loader().load(toLoad)), hosting.loadExecutor());
      getContext().pipeToSelf(future, LoadCompleted::new);
    }
    return this;
  }

  private java.time.Duration sinceLoadStarted() {
    return java.time.Duration.ofNanos(System.nanoTime() - loadStarted);
  }

  private Behavior<Command> onLoadCompleted(LoadCompleted completed) {
    if (released) {
      return this;
    }
    if (completed.failure() != null) {
      Failure failure =
          Failure.logged(getContext().getLog(), "Slice " + entityId, completed.failure());
      hosting.loadListener().failed(cause, sinceLoadStarted());
      result = new LoadFailed(sliceId, failure);
    } else {
      LoadedSlice slice = completed.slice();
      hosting.loadListener().loaded(cause, slice.rows(), slice.bytes(), sinceLoadStarted());
      getContext()
          .getLog()
          .debug("Slice {} loaded: {} rows, {} bytes", entityId, slice.rows(), slice.bytes());
      result =
          new Loaded(
              sliceId,
              copy,
              slice.rows(),
              slice.bytes(),
              hosting.location().get(),
              slice.decoder());
    }
    waiting.forEach(ref -> ref.tell(result));
    waiting.clear();
    return this;
  }

  /** Frees the memory now and asks the shard to let this entity go for good. */
  private Behavior<Command> onRelease() {
    released = true;
    holder.close();
    entity.getShard().tell(new ClusterSharding.Passivate<>(getContext().getSelf()));
    return this;
  }

  private Behavior<Command> onPostStop() {
    boolean shuttingDown =
        CoordinatedShutdown.get(Adapter.toClassic(getContext().getSystem()))
            .getShutdownReason()
            .isPresent();
    if (released || hosting.retirement().linger().isZero() || (shuttingDown && alone())) {
      holder.close();
    } else {
      // Moved by a rebalance or a leaving node: the dataset points readers here until the new
      // holder has loaded, so this copy keeps serving meanwhile (the node's Flight server stays
      // up until retired copies are gone).
      hosting.retirement().retire(holder::close, shuttingDown);
    }
    return this;
  }

  /** No other member is up to take the slice over, so there is nobody to serve for. */
  private boolean alone() {
    org.apache.pekko.cluster.typed.Cluster cluster =
        org.apache.pekko.cluster.typed.Cluster.get(getContext().getSystem());
    for (org.apache.pekko.cluster.Member member : cluster.state().getMembers()) {
      if (!member.equals(cluster.selfMember())
          && member.status() == org.apache.pekko.cluster.MemberStatus.up()) {
        return false;
      }
    }
    return true;
  }

  /** Hands a finished load to the store unless the entity stopped meanwhile. */
  private static final class Holder {
    private final SliceStore store;
    private LoadedSlice slice;
    private boolean closed;

    Holder(SliceStore store) {
      this.store = store;
    }

    synchronized LoadedSlice offer(LoadedSlice loaded) {
      if (closed) {
        loaded.release();
        throw new java.util.concurrent.CancellationException(
            "slice " + loaded.sliceId() + " stopped while loading");
      }
      slice = loaded;
      store.put(loaded);
      return loaded;
    }

    synchronized void close() {
      closed = true;
      if (slice != null) {
        store.remove(slice);
        slice.release();
        slice = null;
      }
    }
  }
}
