package io.floe.dataset;

import io.floe.dataset.DatasetEntity.Command;
import io.floe.dataset.DatasetEntity.LoadReply;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Owner;
import io.floe.util.Excerpt;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * A dataset whose table is being planned on the load threads: loads of the same spec wait for the
 * plan (or for READY), slices that ask for their spec wait too; the plan makes it a {@link
 * ServingDataset}, a failure a {@link FailedDataset}.
 */
final class PlanningDataset extends AbstractBehavior<Command> {
  private final DatasetContext dataset;
  private final DatasetSpec spec;
  private final Owner owner;
  private final long generation;
  private final long requestedAtNanos = System.nanoTime();
  private final Map<String, Set<String>> holders;
  private final List<Long> retainedSnapshots;
  private final List<ActorRef<LoadReply>> waitingForPlan = new ArrayList<>();
  private final List<ActorRef<LoadReply>> waitingForReady = new ArrayList<>();
  private final List<DatasetEntity.GetSliceSpec> waitingForSpecs = new ArrayList<>();

  private PlanningDataset(
      DatasetContext dataset,
      DatasetSpec spec,
      Owner owner,
      long generation,
      Map<String, Set<String>> holders,
      List<Long> retainedSnapshots) {
    super(dataset.actor());
    this.dataset = dataset;
    this.spec = spec;
    this.owner = owner;
    this.generation = generation;
    this.holders = holders;
    this.retainedSnapshots = retainedSnapshots;
  }

  /** A new load of {@code spec} owned by {@code owner}; its slice ids carry {@code generation}. */
  static PlanningDataset start(
      DatasetContext dataset, DatasetSpec spec, Owner owner, long generation) {
    PlanningDataset planning =
        new PlanningDataset(dataset, spec, owner, generation, new LinkedHashMap<>(), List.of());
    planning.plan(spec, true);
    return planning;
  }

  /**
   * A dataset started again elsewhere from its record: it plans the snapshot it served under the
   * same generation (so the same slices), keeps what jobs held, and frees what it was freeing (the
   * linger cannot be resumed).
   */
  static PlanningDataset recovering(DatasetContext dataset, DatasetRecord record) {
    DatasetEntity.LOG.info(
        "Dataset '{}': recovering generation {}", dataset.name(), record.generation());
    record.retiring().forEach(sliceId -> dataset.release(sliceId, record.spec().replicas()));
    Map<String, Set<String>> holders = new LinkedHashMap<>();
    record.holders().forEach((job, fps) -> holders.put(job, new HashSet<>(fps)));
    PlanningDataset planning =
        new PlanningDataset(
            dataset,
            record.spec(),
            record.owner(),
            record.generation(),
            holders,
            record.retainedSnapshots());
    planning.plan(record.pinnedSpec(), false);
    return planning;
  }

  private void plan(DatasetSpec toPlan, boolean admit) {
    DatasetEntity.LOG.info(
        "Dataset '{}': planning {}", dataset.name(), Excerpt.location(toPlan.table()));
    dataset.plan(
        toPlan,
        generation,
        admit,
        (plan, failure) -> new DatasetEntity.Planned(generation, plan, failure));
  }

  /**
   * A load of a name that has no dataset (absent or failed): its spec under a new generation, owned
   * by the requester.
   */
  static Behavior<Command> load(DatasetContext dataset, DatasetEntity.Load load) {
    return start(dataset, load.spec(), load.requester().owner(), System.currentTimeMillis())
        .take(load);
  }

  /**
   * Takes a load: the same spec waits for the plan (or READY), another is refused, and so is any
   * from outside the owner's tenant.
   */
  Behavior<Command> take(DatasetEntity.Load load) {
    if (DatasetEntity.refused(
        dataset.name(), owner, load.requester(), "load over", status(), load.replyTo())) {
      return this;
    }
    if (!load.spec().equals(spec)) {
      dataset.refuseOtherSpec(load.spec(), spec, status(), load.replyTo());
    } else if (load.untilReady()) {
      waitingForReady.add(load.replyTo());
    } else {
      waitingForPlan.add(load.replyTo());
    }
    return this;
  }

  @Override
  public Receive<Command> createReceive() {
    return DatasetEntity.answerWithoutLayout(newReceiveBuilder(), this::status)
        .onMessage(DatasetEntity.Load.class, this::take)
        .onMessage(DatasetEntity.Planned.class, this::onPlanned)
        .onMessage(DatasetEntity.Refresh.class, this::onRefresh)
        .onMessage(
            DatasetEntity.GetSliceSpec.class,
            get -> {
              waitingForSpecs.add(get);
              return this;
            })
        .onMessage(
            DatasetEntity.Hold.class,
            hold -> {
              holders.put(hold.job(), new HashSet<>(hold.fingerprints()));
              return this;
            })
        .onMessage(
            DatasetEntity.Unhold.class,
            unhold -> {
              holders.remove(unhold.job());
              return this;
            })
        .onMessage(DatasetEntity.Drop.class, this::onDrop)
        .onMessage(DatasetEntity.Stop.class, stop -> Behaviors.stopped())
        .onMessage(DatasetEntity.RecordWritten.class, dataset::written)
        // Reports and plans of an earlier load of this name: not this one's.
        .onMessage(Command.class, ignored -> this)
        .build();
  }

  private Behavior<Command> onPlanned(DatasetEntity.Planned planned) {
    if (planned.generation() != generation) {
      return this;
    }
    if (planned.failure() != null) {
      FailedDataset failed =
          new FailedDataset(
              dataset,
              spec,
              Failure.logged(
                  DatasetEntity.LOG,
                  "Planning dataset '" + dataset.name() + "'",
                  planned.failure()),
              null,
              null,
              owner);
      dataset.forgetRecord();
      failed.refuse(waitingForPlan);
      failed.refuse(waitingForReady);
      waitingForSpecs.forEach(DatasetEntity::notWanted);
      return failed;
    }
    ServingDataset serving =
        new ServingDataset(
            dataset,
            spec,
            owner,
            generation,
            requestedAtNanos,
            new DatasetVersion(planned.plan(), spec.replicas()),
            holders,
            retainedSnapshots,
            waitingForReady,
            waitingForSpecs);
    LoadReply answer = new LoadReply.Answered(serving.status());
    waitingForPlan.forEach(waiter -> waiter.tell(answer));
    return serving.begin();
  }

  private Behavior<Command> onRefresh(DatasetEntity.Refresh refresh) {
    if (DatasetEntity.refused(
        dataset.name(), owner, refresh.requester(), "refresh", status(), refresh.replyTo())) {
      return this;
    }
    if (refresh.spec() != null
        && !refresh.spec().withSnapshotId(null).equals(spec.withSnapshotId(null))) {
      dataset.refuseOtherSpec(refresh.spec(), spec, status(), refresh.replyTo());
    } else {
      // Not ready yet: the gateway tells the caller so.
      refresh.replyTo().tell(new LoadReply.Answered(status()));
    }
    return this;
  }

  private Behavior<Command> onDrop(DatasetEntity.Drop drop) {
    if (DatasetEntity.refused(
        dataset.name(), owner, drop.requester(), "drop", status(), drop.replyTo())) {
      return this;
    }
    return dataset.drop(drop, status(), List.of(waitingForPlan, waitingForReady), waitingForSpecs);
  }

  private DatasetStatus status() {
    return new DatasetStatus(
        dataset.name(),
        null,
        DatasetState.PLANNING,
        0,
        0,
        0,
        0,
        null,
        null,
        null,
        null,
        null,
        List.of(),
        owner,
        spec.replicas());
  }
}
