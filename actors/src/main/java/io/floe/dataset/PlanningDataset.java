package io.floe.dataset;

import io.floe.dataset.DatasetEntity.Command;
import io.floe.dataset.DatasetEntity.LoadReply;
import io.floe.error.ErrorKind;
import io.floe.iceberg.ScanPlan;
import io.floe.resources.AdmissionDesk;
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
 * plan (or for READY), slices that ask for their spec wait too. A new load's plan then asks the
 * data nodes' memory to admit it ({@link AdmissionDesk}), and it may wait here, still PLANNING, for
 * loads in flight to end. The admitted plan makes it a {@link ServingDataset}; a failure or a
 * refusal (RESOURCE_EXHAUSTED, saying what it needs and what is free) a {@link FailedDataset}.
 */
final class PlanningDataset extends AbstractBehavior<Command> {
  private final DatasetContext dataset;
  private final DatasetSpec spec;
  private final Owner owner;
  private final long generation;
  private final long requestedAtNanos = System.nanoTime();
  private final Map<String, Set<String>> holders;
  private final List<Long> retainedSnapshots;

  /** A new load, which the data nodes' memory must admit (a recovering dataset held it already). */
  private final boolean admit;

  /** The plan waiting for the admission desk's decision; null until planned. */
  private ScanPlan waitingForMemory;

  /** The desk queued the load behind loads in flight: it waits here, PLANNING, for memory. */
  private boolean queued;

  private final List<ActorRef<LoadReply>> waitingForPlan = new ArrayList<>();
  private final List<ActorRef<LoadReply>> waitingForReady = new ArrayList<>();
  private final List<DatasetEntity.GetSliceSpec> waitingForSpecs = new ArrayList<>();

  private PlanningDataset(
      DatasetContext dataset,
      DatasetSpec spec,
      Owner owner,
      long generation,
      Map<String, Set<String>> holders,
      List<Long> retainedSnapshots,
      boolean admit) {
    super(dataset.actor());
    this.admit = admit;
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
        new PlanningDataset(
            dataset, spec, owner, generation, new LinkedHashMap<>(), List.of(), true);
    planning.plan(spec);
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
            record.retainedSnapshots(),
            false);
    planning.plan(record.pinnedSpec());
    return planning;
  }

  private void plan(DatasetSpec toPlan) {
    DatasetEntity.LOG.info(
        "Dataset '{}': planning {}", dataset.name(), Excerpt.location(toPlan.table()));
    dataset.plan(
        toPlan,
        generation,
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
    } else if (queued) {
      load.replyTo().tell(new LoadReply.Answered(status())); // taken: it waits for memory
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
        .onMessage(DatasetEntity.AdmissionDecided.class, this::onAdmissionDecided)
        .onMessage(
            DatasetEntity.AskAdmission.class,
            ask -> {
              dataset.askAdmissionAgain();
              return this;
            })
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
        .onMessage(
            DatasetEntity.Stop.class,
            stop -> {
              dataset.releaseAdmission(load()); // a wait for memory ends with the entity
              return Behaviors.stopped();
            })
        .onMessage(DatasetEntity.RecordWritten.class, dataset::written)
        // Reports and plans of an earlier load of this name: not this one's.
        .onMessage(Command.class, ignored -> this)
        .build();
  }

  private Behavior<Command> onPlanned(DatasetEntity.Planned planned) {
    if (planned.generation() != generation || waitingForMemory != null) {
      return this;
    }
    if (planned.failure() != null) {
      return fail(
          Failure.logged(
              DatasetEntity.LOG, "Planning dataset '" + dataset.name() + "'", planned.failure()));
    }
    if (!admit) {
      return serve(planned.plan(), dataset.loadsAtOnce());
    }
    waitingForMemory = planned.plan();
    dataset.admit(dataset.need(waitingForMemory, spec.replicas(), slice -> true), load());
    return this;
  }

  /** The slices to load at once as admitted: fewer than configured when only that fit. */
  private int slicesAtOnce(int admitted) {
    return admitted > 0 ? Math.min(admitted, dataset.loadsAtOnce()) : dataset.loadsAtOnce();
  }

  private Behavior<Command> onAdmissionDecided(DatasetEntity.AdmissionDecided answer) {
    AdmissionDesk.Decided decided = answer.decided();
    if (!decided.load().equals(load()) || waitingForMemory == null) {
      return this;
    }
    switch (decided.verdict()) {
      case QUEUED -> {
        if (!queued) {
          queued = true;
          DatasetEntity.LOG.info(
              "Dataset '{}' waits for memory: {}", dataset.name(), decided.reason());
          // Taken: those that did not ask to wait for READY hear so now, not after the wait.
          LoadReply taken = new LoadReply.Answered(status());
          waitingForPlan.forEach(waiter -> waiter.tell(taken));
          waitingForPlan.clear();
        }
        return this;
      }
      case REFUSED -> {
        dataset.admissionDecided();
        return fail(new Failure(ErrorKind.RESOURCE_EXHAUSTED, decided.reason()));
      }
      default -> {
        dataset.admissionDecided();
        if (queued) {
          DatasetEntity.LOG.info(
              "Dataset '{}' admitted ({} slices at once): loads in flight made room",
              dataset.name(),
              decided.slicesAtOnce());
        }
        return serve(waitingForMemory, slicesAtOnce(decided.slicesAtOnce()));
      }
    }
  }

  /** The admission desk's name for this load: its generation. */
  private String load() {
    return Long.toString(generation);
  }

  private Behavior<Command> fail(Failure why) {
    FailedDataset failed = new FailedDataset(dataset, spec, why, null, null, owner);
    dataset.forgetRecord();
    failed.refuse(waitingForPlan);
    failed.refuse(waitingForReady);
    waitingForSpecs.forEach(DatasetEntity::notWanted);
    return failed;
  }

  private Behavior<Command> serve(ScanPlan plan, int slicesAtOnce) {
    ServingDataset serving =
        new ServingDataset(
            dataset,
            spec,
            owner,
            generation,
            requestedAtNanos,
            new DatasetVersion(plan, spec.replicas()),
            slicesAtOnce,
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
    dataset.releaseAdmission(load());
    return dataset.drop(drop, status(), List.of(waitingForPlan, waitingForReady), waitingForSpecs);
  }

  private DatasetStatus status() {
    return DatasetStatus.planning(dataset.name(), null, owner, spec.replicas());
  }
}
