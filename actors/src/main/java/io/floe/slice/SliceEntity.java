package io.floe.slice;

import io.floe.dataset.Failure;
import io.floe.node.NodeResources;
import io.floe.serialization.CborSerializable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/**
 * One slice of one dataset, placed by cluster sharding. It decodes its rows into this node's Arrow
 * memory on the load threads and registers them in the node's {@link SliceStore}, where the gateway
 * streams them from. Its memory is freed when it stops, whatever the reason (drop, hand-off,
 * shutdown); a stop that races a running load frees that load's result as soon as it completes.
 */
public final class SliceEntity extends AbstractBehavior<SliceEntity.Command> {
  public static final EntityTypeKey<Command> TYPE_KEY =
      EntityTypeKey.create(Command.class, "floe-slice");

  /** Messages a slice entity takes. */
  public sealed interface Command extends CborSerializable {}

  /** Load the slice (idempotent); the reply comes once it is held or has failed. */
  public record Load(SliceSpec spec, ActorRef<LoadResult> replyTo) implements Command {}

  /** Free the slice's memory and stop: its dataset was dropped or failed. */
  public record Release() implements Command {}

  /** Stop for a shard hand-off or node shutdown; memory is freed as on release. */
  public record Stop() implements Command {}

  private record LoadCompleted(LoadedSlice slice, Throwable failure) implements Command {}

  /** The outcome of a load. */
  public sealed interface LoadResult extends CborSerializable {
    String sliceId();
  }

  /**
   * @param holder the Flight location (URI) of the node holding the slice
   */
  public record Loaded(String sliceId, long rows, long bytes, String holder)
      implements LoadResult {}

  public record LoadFailed(String sliceId, Failure failure) implements LoadResult {}

  public static void init(ActorSystem<?> system, NodeResources resources) {
    ClusterSharding.get(system)
        .init(
            Entity.of(TYPE_KEY, ctx -> create(ctx.getEntityId(), resources))
                .withStopMessage(new Stop()));
  }

  static Behavior<Command> create(String sliceId, NodeResources resources) {
    return Behaviors.setup(ctx -> new SliceEntity(ctx, sliceId, resources));
  }

  private final String sliceId;
  private final NodeResources resources;
  private final Holder holder;
  private final List<ActorRef<LoadResult>> waiting = new ArrayList<>();
  private SliceSpec spec;
  private LoadResult result;

  private SliceEntity(ActorContext<Command> context, String sliceId, NodeResources resources) {
    super(context);
    this.sliceId = sliceId;
    this.resources = resources;
    this.holder = new Holder(resources.sliceStore());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Load.class, this::onLoad)
        .onMessage(LoadCompleted.class, this::onLoadCompleted)
        .onMessage(Release.class, m -> Behaviors.stopped())
        .onMessage(Stop.class, m -> Behaviors.stopped())
        .onSignal(PostStop.class, s -> onPostStop())
        .build();
  }

  private Behavior<Command> onLoad(Load load) {
    if (result != null) {
      load.replyTo().tell(result);
      return this;
    }
    waiting.add(load.replyTo());
    if (spec == null) {
      spec = load.spec();
      SliceSpec toLoad = spec;
      getContext().getLog().debug("Loading slice {}", sliceId);
      CompletableFuture<LoadedSlice> future =
          CompletableFuture.supplyAsync(
              () -> holder.offer(resources.loader().load(toLoad)), resources.loadExecutor());
      getContext().pipeToSelf(future, LoadCompleted::new);
    }
    return this;
  }

  private Behavior<Command> onLoadCompleted(LoadCompleted completed) {
    if (completed.failure() != null) {
      Failure failure = Failure.of(completed.failure());
      getContext().getLog().warn("Slice {} failed to load: {}", sliceId, failure.message());
      result = new LoadFailed(sliceId, failure);
    } else {
      LoadedSlice slice = completed.slice();
      getContext()
          .getLog()
          .debug("Slice {} loaded: {} rows, {} bytes", sliceId, slice.rows(), slice.bytes());
      result = new Loaded(sliceId, slice.rows(), slice.bytes(), resources.advertisedLocation());
    }
    waiting.forEach(ref -> ref.tell(result));
    waiting.clear();
    if (result instanceof LoadFailed) {
      // Nothing is held; a later Load (after the dataset retries) starts afresh.
      return Behaviors.stopped();
    }
    return this;
  }

  private Behavior<Command> onPostStop() {
    holder.close();
    return this;
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
