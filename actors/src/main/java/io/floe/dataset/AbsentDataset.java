package io.floe.dataset;

import io.floe.dataset.DatasetEntity.Command;
import io.floe.dataset.DatasetEntity.LoadReply;
import io.floe.error.ErrorKind;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * A name nobody loaded, or whose dataset was dropped: a load starts planning; a request is answered
 * as absent, and the entity leaves its shard rather than linger for every name asked (or held by a
 * job).
 */
final class AbsentDataset extends AbstractBehavior<Command> {
  private final DatasetContext dataset;

  AbsentDataset(DatasetContext dataset) {
    super(dataset.actor());
    this.dataset = dataset;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(DatasetEntity.Load.class, load -> PlanningDataset.load(dataset, load))
        .onMessage(
            DatasetEntity.Refresh.class,
            refresh ->
                leave(
                    () ->
                        refresh
                            .replyTo()
                            .tell(
                                new LoadReply.Refused(
                                    status(),
                                    new Failure(
                                        ErrorKind.DATASET_NOT_FOUND,
                                        "No dataset '"
                                            + dataset.name()
                                            + "' to refresh; load it")))))
        .onMessage(DatasetEntity.GetStatus.class, get -> leave(() -> get.replyTo().tell(status())))
        .onMessage(
            DatasetEntity.GetLayout.class,
            get -> leave(() -> get.replyTo().tell(new DatasetEntity.LayoutReply.Missing(status()))))
        .onMessage(
            DatasetEntity.GetSliceSpec.class,
            get -> leave(() -> get.replyTo().tell(new DatasetEntity.SliceAssignment.NotWanted())))
        .onMessage(
            DatasetEntity.Drop.class,
            drop -> leave(() -> drop.replyTo().tell(new LoadReply.Answered(status()))))
        .onMessage(DatasetEntity.Hold.class, hold -> leave(() -> {}))
        .onMessage(DatasetEntity.Unhold.class, unhold -> leave(() -> {}))
        .onMessage(DatasetEntity.RecordWritten.class, dataset::written)
        .onMessage(DatasetEntity.Stop.class, stop -> Behaviors.stopped())
        // Late plans and slice reports of a dropped dataset: nothing to do.
        .onMessage(Command.class, ignored -> this)
        .build();
  }

  private DatasetStatus status() {
    return DatasetStatus.absent(dataset.name());
  }

  private Behavior<Command> leave(Runnable answer) {
    answer.run();
    dataset.leave();
    return this;
  }
}
