package io.floe.dataset;

import io.floe.ddata.RecordDirectory;
import io.floe.ddata.RecordRecovery;
import io.floe.error.ErrorKind;
import io.floe.iceberg.MemoryNeed;
import io.floe.iceberg.ScanPlan;
import io.floe.iceberg.SliceSpec;
import io.floe.resources.AdmissionDesk;
import io.floe.resources.DatasetPlanning;
import io.floe.serialization.CborSerializable;
import io.floe.spec.DatasetLayout;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Owner;
import io.floe.tenant.Requester;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.ReceiveBuilder;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityContext;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;

/**
 * One loaded dataset, placed by cluster sharding under its name. It plans the scan on the load
 * threads, asks its slice entities to load with bounded concurrency, and tracks PLANNING → LOADING
 * k/n → READY (or FAILED with the reason, after releasing every slice it loaded). Each stage is a
 * behavior of its own: {@link AbsentDataset}, {@link PlanningDataset}, {@link ServingDataset}
 * (LOADING, READY, DEGRADED and refreshes) and {@link FailedDataset}; this class holds the messages
 * and how the entity starts. Once READY it answers the layout (slice row counts and holders; the
 * prefix sums of the counts are the global row index) that the gateway plans reads with.
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
public final class DatasetEntity {
  public static final EntityTypeKey<Command> TYPE_KEY =
      EntityTypeKey.create(Command.class, "floe-dataset");

  /** Every loaded dataset entity, cluster-wide, for {@code list}. */
  public static final ServiceKey<Command> LOADED =
      ServiceKey.create(Command.class, "floe-datasets");

  /** Every loaded dataset's record (spec, generation, snapshots, holders), by name. */
  public static final RecordDirectory<DatasetRecord> DIRECTORY =
      RecordDirectory.named("floe-datasets", java.time.Duration.ofSeconds(5));

  private static final int STASH_CAPACITY = 10_000;

  // One logger for every state: an actor's context logger is named after its current behavior.
  static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DatasetEntity.class);

  /** Messages a dataset entity takes. */
  public sealed interface Command extends CborSerializable {}

  /**
   * Load (idempotent for the same spec). The reply comes once planning is done, or, with {@code
   * untilReady}, once the dataset is READY or FAILED. A load under a name that has a dataset (the
   * same spec again, or one replacing a failed dataset) must come from its owner's tenant; a new
   * dataset is owned by the requester.
   */
  public record Load(
      DatasetSpec spec, boolean untilReady, Requester requester, ActorRef<LoadReply> replyTo)
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
  public record Refresh(
      DatasetSpec spec, boolean untilDone, Requester requester, ActorRef<LoadReply> replyTo)
      implements Command {}

  /**
   * From a job: the layouts (by fingerprint) it reads, which the dataset keeps until no job holds
   * them; replaces what the job held before.
   */
  public record Hold(String job, List<String> fingerprints) implements Command {}

  /** From a dropped job: it holds nothing any more. */
  public record Unhold(String job) implements Command {}

  /**
   * Drop, if the requester's tenant owns the dataset (or it is an admin). The answer is the status
   * the dataset had (ABSENT when there was none), or the refusal.
   */
  public record Drop(Requester requester, ActorRef<LoadReply> replyTo) implements Command {}

  /** From a slice entity that (re)started without a spec: which slice am I, whom do I report to? */
  public record GetSliceSpec(String entityId, ActorRef<SliceAssignment> replyTo)
      implements Command {}

  /** Stop for a hand-off or shutdown; the record stays, so the entity recovers where it lands. */
  public record Stop() implements Command {}

  /**
   * The plan of the spec a dataset was loaded with, under a generation (a plan of an earlier load,
   * dropped meanwhile, is not taken).
   */
  record Planned(long generation, ScanPlan plan, Throwable failure) implements Command {}

  /** The admission desk decided the load of its generation: admitted, queued or refused. */
  record AdmissionDecided(AdmissionDesk.Decided decided) implements Command {}

  /**
   * No admission decision heard yet for the load {@code load}, which needs {@code need}: ask again.
   */
  record AskAdmission(MemoryNeed need, String load) implements Command {}

  /** The plan of the table's newest snapshot, for a refresh. */
  record RefreshPlanned(long generation, ScanPlan plan, Throwable failure) implements Command {}

  /** The plan of an older snapshot a recovering dataset keeps for jobs. */
  record RetainedPlanned(long generation, long snapshotId, ScanPlan plan, Throwable failure)
      implements Command {}

  /** The retire linger of a replaced layout's slices is over. */
  record ReleaseRetired(List<String> sliceIds) implements Command {}

  record SliceReply(SliceEntity.LoadResult result) implements Command {}

  record RecordRead(DatasetRecord record, boolean failed, boolean local)
      implements Command, RecordRecovery.Read<DatasetRecord> {}

  /** How far a change of the record got. */
  record RecordWritten(RecordDirectory.Written written) implements Command {}

  /** Ask missing slices again: sharding delivers at most once, and hand-offs can drop a message. */
  record AskMissing() implements Command {}

  /**
   * The answer to a change (load, refresh, drop): the status so far, or why the change was refused
   * or failed.
   */
  public sealed interface LoadReply extends CborSerializable {
    /** The dataset's status after the request. */
    DatasetStatus status();

    /** Taken (or already done): the status says how far the dataset is. */
    record Answered(DatasetStatus status) implements LoadReply {}

    /** Refused or failed, and why; the status is the dataset's as it stays. */
    record Refused(DatasetStatus status, Failure failure) implements LoadReply {}
  }

  /** The answer to {@link GetLayout}: the layout asked for, or why there is none. */
  public sealed interface LayoutReply extends CborSerializable {
    /** The dataset's status as it answered. */
    DatasetStatus status();

    /** The layout asked for (the one serving, or one kept for jobs). */
    record Found(DatasetLayout layout, DatasetStatus status) implements LayoutReply {}

    /**
     * No such layout: the dataset is not READY or DEGRADED (its status says how it stands), or it
     * no longer keeps the layout with the fingerprint asked for.
     */
    record Missing(DatasetStatus status) implements LayoutReply {}
  }

  /** What a dataset answers a slice entity that asks for its spec. */
  public sealed interface SliceAssignment extends CborSerializable {
    /**
     * The slice's spec and where to report its load.
     *
     * @param restart whether the slice had loaded before (it is starting again after its node left
     *     or died, or a rebalance), rather than loading for the first time
     */
    record Assigned(SliceSpec spec, ActorRef<SliceEntity.LoadResult> reportTo, boolean restart)
        implements SliceAssignment {}

    /** No layout of the dataset has the slice (dropped, failed, refreshed away): it leaves. */
    record NotWanted() implements SliceAssignment {}
  }

  public static void init(ActorSystem<?> system, DatasetPlanning planning) {
    // Start this node's replicator now: it is created lazily, and a node without one neither
    // takes part in majority writes nor keeps a copy of the dataset records.
    DistributedData.get(system);
    planning.memory().start(system);
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
            timers ->
                Behaviors.setup(
                    ctx ->
                        Behaviors.withStash(
                            STASH_CAPACITY,
                            stash ->
                                DistributedData.withReplicatorMessageAdapter(
                                    (ReplicatorMessageAdapter<
                                                Command, LWWMap<String, DatasetRecord>>
                                            replicator) ->
                                        recover(
                                            new DatasetContext(
                                                ctx, entity, planning, timers, replicator),
                                            stash))))));
  }

  /**
   * Reads this dataset's record (if any) before taking messages, stashing them meanwhile; then the
   * dataset is absent, or plans again what its record says it served.
   */
  private static Behavior<Command> recover(DatasetContext dataset, StashBuffer<Command> stash) {
    String name = dataset.name();
    return RecordRecovery.recover(
        Command.class,
        stash,
        dataset.replicator(),
        DIRECTORY,
        name,
        RecordRead.class,
        RecordRead::new,
        (record, unreadable) -> {
          if (unreadable) {
            LOG.warn("Dataset '{}': its record could not be read; starting empty", name);
          } else if (record != null) {
            LOG.info("Dataset '{}' entity started from its record", name);
          } else {
            // Any name asked about starts one (and it leaves at once): not an operator's news.
            LOG.debug("Dataset '{}' entity started with no record", name);
          }
          return record == null
              ? new AbsentDataset(dataset)
              : PlanningDataset.recovering(dataset, record);
        });
  }

  /** Tells a slice that asked for its spec that no layout of this dataset wants it. */
  static void notWanted(GetSliceSpec get) {
    get.replyTo().tell(new SliceAssignment.NotWanted());
  }

  /**
   * Answers status and layout asks of a dataset that serves no layout (planning, failed) with its
   * status.
   */
  static ReceiveBuilder<Command> answerWithoutLayout(
      ReceiveBuilder<Command> receive, java.util.function.Supplier<DatasetStatus> status) {
    return receive
        .onMessage(
            GetStatus.class,
            get -> {
              get.replyTo().tell(status.get());
              return Behaviors.same();
            })
        .onMessage(
            GetLayout.class,
            get -> {
              get.replyTo().tell(new LayoutReply.Missing(status.get()));
              return Behaviors.same();
            });
  }

  /** Why a load (or refresh) of another spec under a loaded name is refused. */
  static Failure loadedOtherwise(String name, DatasetSpec loaded) {
    return new Failure(
        ErrorKind.ALREADY_EXISTS,
        String.format(
            "Dataset '%s' is already loaded from '%s' with other settings;"
                + " drop it first or choose another name",
            name, loaded.table()));
  }

  /**
   * Refuses (NOT_OWNER) a change of a dataset owned by {@code owner} that {@code requester} may not
   * make, answering {@code replyTo}; whether it did.
   *
   * @param change what the requester asked for, as the refusal says it ("drop", "refresh")
   */
  static boolean refused(
      String name,
      Owner owner,
      Requester requester,
      String change,
      DatasetStatus status,
      ActorRef<LoadReply> replyTo) {
    return requester
        .mayNotChangeDataset(name, owner, change)
        .map(
            why -> {
              LOG.info("Dataset '{}': {} refused: {}", name, change, why);
              replyTo.tell(new LoadReply.Refused(status, new Failure(ErrorKind.NOT_OWNER, why)));
              return true;
            })
        .orElse(false);
  }

  /** The answer to loads still waiting when their dataset is dropped. */
  static LoadReply dropped(String name) {
    return new LoadReply.Refused(
        DatasetStatus.absent(name),
        new Failure(ErrorKind.DATASET_NOT_FOUND, "dataset '" + name + "' was dropped"));
  }

  private DatasetEntity() {}
}
