package io.floe.dataset;

import io.floe.dataset.DatasetEntity.Command;
import io.floe.iceberg.MemoryNeed;
import io.floe.iceberg.ScanPlan;
import io.floe.iceberg.SliceSpec;
import io.floe.resources.AdmissionDesk;
import io.floe.resources.ClusterMemory;
import io.floe.resources.DatasetPlanning;
import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityContext;

/**
 * What every stage of one dataset entity works with, and the few things each stage does through it:
 * plan on the load threads, ask a slice to load or to free its memory, keep the dataset's record,
 * leave its shard.
 */
final class DatasetContext {
  /** Ask missing slices again this often while some are missing. */
  private static final Duration ASK_MISSING_EVERY = Duration.ofSeconds(5);

  private static final String ASK_MISSING_TIMER = "ask-missing";

  /** Ask the admission desk again this often until it admits or refuses a load. */
  private static final Duration ASK_ADMISSION_EVERY = Duration.ofSeconds(5);

  private static final String ASK_ADMISSION_TIMER = "ask-admission";

  private final String name;
  private final ActorContext<Command> actor;
  private final EntityContext<Command> entity;
  private final DatasetPlanning planning;
  private final TimerScheduler<Command> timers;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator;
  private final SelfUniqueAddress node;
  private final ClusterSharding sharding;
  private final ActorRef<SliceEntity.LoadResult> sliceReplies;
  private final ActorRef<AdmissionDesk.Decided> admissionDecisions;

  /** The load the admission desk has not decided yet, asked again until it has; null if none. */
  private DatasetEntity.AskAdmission asking;

  DatasetContext(
      ActorContext<Command> actor,
      EntityContext<Command> entity,
      DatasetPlanning planning,
      TimerScheduler<Command> timers,
      ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator) {
    this.name = entity.getEntityId();
    this.actor = actor;
    this.entity = entity;
    this.planning = planning;
    this.timers = timers;
    this.replicator = replicator;
    this.node = DistributedData.get(actor.getSystem()).selfUniqueAddress();
    this.sharding = ClusterSharding.get(actor.getSystem());
    this.sliceReplies =
        actor.messageAdapter(SliceEntity.LoadResult.class, DatasetEntity.SliceReply::new);
    this.admissionDecisions =
        actor.messageAdapter(AdmissionDesk.Decided.class, DatasetEntity.AdmissionDecided::new);
  }

  String name() {
    return name;
  }

  ActorContext<Command> actor() {
    return actor;
  }

  ReplicatorMessageAdapter<Command, LWWMap<String, DatasetRecord>> replicator() {
    return replicator;
  }

  /** Where slices report their loads. */
  ActorRef<SliceEntity.LoadResult> sliceReplies() {
    return sliceReplies;
  }

  /** Slices asked to load at once while a version loads (unless its admission allowed fewer). */
  int loadsAtOnce() {
    return planning.loadsPerDataset();
  }

  /** Plans {@code spec} on the load threads; the outcome comes back as {@code outcome} makes it. */
  void plan(DatasetSpec spec, long generation, BiFunction<ScanPlan, Throwable, Command> outcome) {
    CompletableFuture<ScanPlan> plan =
        CompletableFuture.supplyAsync(
            () -> {
              TableSource source = planning.tables().resolve(spec.table(), spec.catalog());
              return planning
                  .planner()
                  .plan(source, planning.tables().open(source), spec, generation);
            },
            planning.loadExecutor());
    actor.pipeToSelf(plan, outcome::apply);
  }

  /**
   * What loading the slices of {@code plan} that {@code loads} picks needs, every copy ({@link
   * MemoryNeed}).
   */
  MemoryNeed need(ScanPlan plan, int replicas, Predicate<SliceSpec> loads) {
    return MemoryNeed.of(plan, planning.memory().slicesAtOnce(planning.loadsPerDataset()), loads)
        // Every copy of a slice takes its memory again, on another node, and decodes too.
        .times(replicas);
  }

  /**
   * Asks the admission desk to admit the load {@code load} of this dataset, which needs {@code
   * need} ({@link ClusterMemory#admit}); the decision comes as {@link
   * DatasetEntity.AdmissionDecided}, and the entity asks again every {@link #ASK_ADMISSION_EVERY}
   * ({@link #askAdmissionAgain}) until it has one that is not "queued" ({@link #admissionDecided}):
   * a desk that moved (its node died) lost the question. A recovering dataset is not asked: it held
   * its memory already.
   */
  void admit(MemoryNeed need, String load) {
    asking = new DatasetEntity.AskAdmission(need, load);
    askAdmissionAgain();
    if (!timers.isTimerActive(ASK_ADMISSION_TIMER)) {
      timers.startTimerWithFixedDelay(ASK_ADMISSION_TIMER, asking, ASK_ADMISSION_EVERY);
    }
  }

  /** Asks the desk again about the load still undecided, if any. */
  void askAdmissionAgain() {
    if (asking != null) {
      planning
          .memory()
          .admit(name, asking.load(), asking.need(), admissionDecisions, actor.getSelf());
    }
  }

  /** The load was admitted or refused: no more asking. */
  void admissionDecided() {
    asking = null;
    timers.cancel(ASK_ADMISSION_TIMER);
  }

  /**
   * Ends the memory reservation of the load {@code load} (or its wait for one): it has every slice,
   * failed or was dropped. Nothing happens if it had none.
   */
  void releaseAdmission(String load) {
    if (asking != null && asking.load().equals(load)) {
      admissionDecided();
    }
    planning.memory().release(name, load);
  }

  /**
   * Refuses a load or refresh of {@code other}, a spec this dataset is not loaded from. The refusal
   * says what is wrong with {@code other} itself when it could not be loaded under any name (a
   * filter that does not parse, a column or table that does not exist): planning it, on the load
   * threads, is the only way to know, and an ALREADY_EXISTS would hide it. Otherwise the name is
   * taken. The answer goes straight from the load thread to {@code replyTo}; the entity does not
   * wait for it.
   */
  void refuseOtherSpec(
      DatasetSpec other,
      DatasetSpec loaded,
      DatasetStatus status,
      ActorRef<DatasetEntity.LoadReply> replyTo) {
    Failure taken = DatasetEntity.loadedOtherwise(name, loaded);
    CompletableFuture.runAsync(
            () -> {
              TableSource source = planning.tables().resolve(other.table(), other.catalog());
              planning.planner().plan(source, planning.tables().open(source), other, 0);
            },
            planning.loadExecutor())
        .whenComplete(
            (planned, error) ->
                replyTo.tell(
                    new DatasetEntity.LoadReply.Refused(
                        status,
                        error == null
                            ? taken
                            : Failure.logged(
                                DatasetEntity.LOG,
                                "Load of '" + name + "' from " + other.table(),
                                error))));
  }

  /** Asks every copy of a slice to load (or to report that it holds its data). */
  void load(SliceSpec slice, int replicas) {
    for (String copy : SliceCopies.entityIds(slice.sliceId(), replicas)) {
      load(slice, copy);
    }
  }

  /** Asks one copy of a slice to load (or to report that it holds its data). */
  void load(SliceSpec slice, String copyEntityId) {
    sharding
        .entityRefFor(SliceEntity.TYPE_KEY, copyEntityId)
        .tell(new SliceEntity.Load(slice, sliceReplies));
  }

  /** Asks every copy of a slice to free its memory and stop. */
  void release(String sliceId, int replicas) {
    for (String copy : SliceCopies.entityIds(sliceId, replicas)) {
      sharding.entityRefFor(SliceEntity.TYPE_KEY, copy).tell(new SliceEntity.Release());
    }
  }

  /** Frees these slices after the retire linger, so that reads planned before still finish. */
  void releaseAfterLinger(List<String> sliceIds) {
    timers.startSingleTimer(
        new Object(),
        new DatasetEntity.ReleaseRetired(List.copyOf(sliceIds)),
        planning.retireLinger());
  }

  /** Asks missing slices again now and then (true) or stops asking (false). */
  void askMissing(boolean someMissing) {
    if (someMissing && !timers.isTimerActive(ASK_MISSING_TIMER)) {
      timers.startTimerWithFixedDelay(
          ASK_MISSING_TIMER, new DatasetEntity.AskMissing(), ASK_MISSING_EVERY);
    } else if (!someMissing) {
      timers.cancel(ASK_MISSING_TIMER);
    }
  }

  /** Lists the dataset for {@code list}, once it has a plan. */
  void registerLoaded() {
    actor
        .getSystem()
        .receptionist()
        .tell(Receptionist.register(DatasetEntity.LOADED, actor.getSelf()));
  }

  void writeRecord(DatasetRecord record) {
    DatasetEntity.DIRECTORY.write(
        replicator, node, name, held -> record, DatasetEntity.RecordWritten::new);
  }

  /** Logs a change of the record that did not reach a majority; a stage's answer to it. */
  <T> Behavior<T> written(DatasetEntity.RecordWritten written) {
    switch (written.written()) {
      case MAJORITY -> {}
      case THIS_NODE ->
          DatasetEntity.LOG.warn(
              "Dataset '{}': its record change reached only some nodes in time; gossip spreads it",
              name);
      case FAILED ->
          DatasetEntity.LOG.error(
              "Dataset '{}': its record change was not applied (the replicator or its durable"
                  + " store refused it)",
              name);
    }
    return Behaviors.same();
  }

  /**
   * Drops the dataset, whatever stage it was in (its slices already released): forgets its record,
   * tells the loads and refreshes still waiting that it was dropped and the slices asking for their
   * spec that they are not wanted, answers the drop with the status it had, and leaves its shard.
   */
  Behavior<Command> drop(
      DatasetEntity.Drop drop,
      DatasetStatus last,
      List<List<ActorRef<DatasetEntity.LoadReply>>> waiting,
      List<DatasetEntity.GetSliceSpec> asking) {
    forgetRecord();
    DatasetEntity.LoadReply dropped = DatasetEntity.dropped(name);
    waiting.forEach(waiters -> waiters.forEach(waiter -> waiter.tell(dropped)));
    asking.forEach(DatasetEntity::notWanted);
    DatasetEntity.LOG.info("Dataset '{}' dropped ({})", name, last.state());
    drop.replyTo().tell(new DatasetEntity.LoadReply.Answered(last));
    leave();
    return new AbsentDataset(this);
  }

  /** Removes the record, so the entity does not recover after a move. */
  void forgetRecord() {
    DatasetEntity.DIRECTORY.remove(replicator, node, name, DatasetEntity.RecordWritten::new);
  }

  /**
   * Asks the shard to passivate this entity, which (with remember entities) also keeps it from
   * being started again: an absent dataset leaves.
   */
  void leave() {
    timers.cancelAll();
    entity.getShard().tell(new ClusterSharding.Passivate<>(actor.getSelf()));
  }
}
