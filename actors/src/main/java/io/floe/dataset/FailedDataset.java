package io.floe.dataset;

import io.floe.dataset.DatasetEntity.Command;
import io.floe.dataset.DatasetEntity.LoadReply;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Owner;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * A dataset whose plan or one of whose slices failed; it holds no memory (every slice it had was
 * freed) and no record. It answers with the reason until it is loaded again (with any spec) or
 * dropped.
 */
final class FailedDataset extends AbstractBehavior<Command> {
  private final DatasetContext dataset;
  private final DatasetSpec spec;
  private final Owner owner;
  private final Failure failure;
  private final Double secondsToReady;
  private final RefreshReport refresh;

  /**
   * @param secondsToReady how long it took to be READY the first time, if it was
   * @param refresh its last refresh, if any
   * @param owner who loaded it (null for a legacy dataset)
   */
  FailedDataset(
      DatasetContext dataset,
      DatasetSpec spec,
      Failure failure,
      Double secondsToReady,
      RefreshReport refresh,
      Owner owner) {
    super(dataset.actor());
    this.dataset = dataset;
    this.spec = spec;
    this.owner = owner;
    this.failure = failure;
    this.secondsToReady = secondsToReady;
    this.refresh = refresh;
    DatasetEntity.LOG.warn(
        "Dataset '{}' FAILED ({}): {}", dataset.name(), failure.kind(), failure.message());
  }

  @Override
  public Receive<Command> createReceive() {
    return DatasetEntity.answerWithoutLayout(newReceiveBuilder(), this::status)
        .onMessage(DatasetEntity.Load.class, this::onLoad)
        .onMessage(DatasetEntity.Refresh.class, this::onRefresh)
        .onMessage(
            DatasetEntity.GetSliceSpec.class,
            get -> {
              DatasetEntity.notWanted(get);
              return this;
            })
        .onMessage(DatasetEntity.Drop.class, this::onDrop)
        .onMessage(DatasetEntity.Stop.class, stop -> Behaviors.stopped())
        .onMessage(DatasetEntity.RecordWritten.class, dataset::written)
        // Late reports and plans of the failed load, holds of jobs: nothing to keep.
        .onMessage(Command.class, ignored -> this)
        .build();
  }

  /** A load replaces the failed dataset (with any spec), if the requester's tenant owns it. */
  private Behavior<Command> onLoad(DatasetEntity.Load load) {
    if (DatasetEntity.refused(
        dataset.name(), owner, load.requester(), "replace", status(), load.replyTo())) {
      return this;
    }
    return PlanningDataset.load(dataset, load);
  }

  private Behavior<Command> onRefresh(DatasetEntity.Refresh refresh) {
    if (DatasetEntity.refused(
        dataset.name(), owner, refresh.requester(), "refresh", status(), refresh.replyTo())) {
      return this;
    }
    Failure why =
        refresh.spec() != null
                && !refresh.spec().withSnapshotId(null).equals(spec.withSnapshotId(null))
            ? DatasetEntity.loadedOtherwise(dataset.name(), spec)
            : failure;
    refresh.replyTo().tell(new LoadReply.Refused(status(), why));
    return this;
  }

  private Behavior<Command> onDrop(DatasetEntity.Drop drop) {
    if (DatasetEntity.refused(
        dataset.name(), owner, drop.requester(), "drop", status(), drop.replyTo())) {
      return this;
    }
    // Its record was removed when it failed; removed again, in case that change was lost.
    return dataset.drop(drop, status(), List.of(), List.of());
  }

  /** Tells loads that waited for this outcome why the dataset failed. */
  void refuse(List<ActorRef<LoadReply>> waiters) {
    LoadReply refused = new LoadReply.Refused(status(), failure);
    waiters.forEach(waiter -> waiter.tell(refused));
    waiters.clear();
  }

  DatasetStatus status() {
    return new DatasetStatus(
        dataset.name(),
        null,
        DatasetState.FAILED,
        0,
        0,
        0,
        0,
        null,
        failure,
        secondsToReady,
        null,
        refresh,
        List.of(),
        owner,
        spec.replicas());
  }
}
