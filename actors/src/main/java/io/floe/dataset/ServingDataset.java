package io.floe.dataset;

import io.floe.dataset.DatasetEntity.Command;
import io.floe.dataset.DatasetEntity.LoadReply;
import io.floe.error.ErrorKind;
import io.floe.iceberg.ScanPlan;
import io.floe.iceberg.SliceSpec;
import io.floe.resources.AdmissionDesk;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Owner;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * A planned dataset: its slices load (LOADING k/n), then it serves its layout (READY), showing
 * DEGRADED while a slice that moved reloads. Which of the three follows from the serving version
 * alone (has every slice answered once; is every slice held now).
 *
 * <p>Refresh: the table's newest snapshot is planned as a second {@link DatasetVersion}; only the
 * slices it does not share with a kept version load, and readers switch to it once every slice is
 * held. A replaced layout stays while a job holds it; its slices nothing uses any more are freed
 * after the retire linger, so reads planned before the switch finish.
 */
final class ServingDataset extends AbstractBehavior<Command> {
  private final DatasetContext dataset;
  private final DatasetSpec spec;

  /** Who loaded it; null for a dataset loaded before owners were kept. */
  private final Owner owner;

  private final long generation;
  private final long requestedAtNanos;
  private final List<ActorRef<LoadReply>> waitingForReady;
  private final List<ActorRef<LoadReply>> waitingForRefresh = new ArrayList<>();
  private final List<DatasetEntity.GetSliceSpec> waitingForSpecs;

  /** The version readers plan with (or the first one, while it loads). */
  private DatasetVersion current;

  /**
   * Slices of the first version loading at once: as many as its admission reserved memory for
   * ({@code floe.load.per-dataset} unless only fewer fit).
   */
  private final int firstLoadAtOnce;

  /** A refresh's version while its new slices load; null when no refresh runs. */
  private DatasetVersion next;

  /** Replaced versions that jobs still read, by snapshot id. */
  private final Map<Long, DatasetVersion> retained = new TreeMap<>();

  /** Job id to the layout fingerprints it reads. */
  private final Map<String, Set<String>> holders;

  /** Slices no version uses, freed when their retire linger ends. */
  private final Set<String> retiring = new LinkedHashSet<>();

  /** Retained snapshots a recovering entity is planning again (kept in the record meanwhile). */
  private final Set<Long> retainedPlanning = new LinkedHashSet<>();

  /** The state last shown, to log and answer its changes. */
  private DatasetState shown = DatasetState.LOADING;

  /** Seconds from the load request to READY; null until then. */
  private Double secondsToReady;

  private RefreshReport refresh;
  private long refreshStartedNanos;

  /**
   * Whether the load may still hold a memory reservation (a new load's, until every slice answered
   * once: then its memory is in the node's figures).
   */
  private boolean admissionHeld = true;

  /** A refresh's plan waiting for the admission desk to admit its new slices; null if none. */
  private ScanPlan refreshWaiting;

  /** The admission desk's name for the refresh it admitted or is asked about; null if none. */
  private String refreshLoad;

  /** The refresh waits behind loads in flight (logged once). */
  private boolean refreshQueued;

  /** How many of the refresh's new slices load at once, as admitted. */
  private int refreshSlicesAtOnce;

  ServingDataset(
      DatasetContext dataset,
      DatasetSpec spec,
      Owner owner,
      long generation,
      long requestedAtNanos,
      DatasetVersion current,
      int firstLoadAtOnce,
      Map<String, Set<String>> holders,
      List<Long> retainedSnapshots,
      List<ActorRef<LoadReply>> waitingForReady,
      List<DatasetEntity.GetSliceSpec> waitingForSpecs) {
    super(dataset.actor());
    this.dataset = dataset;
    this.spec = spec;
    this.owner = owner;
    this.generation = generation;
    this.requestedAtNanos = requestedAtNanos;
    this.current = current;
    this.firstLoadAtOnce = firstLoadAtOnce;
    this.holders = holders;
    this.waitingForReady = waitingForReady;
    this.waitingForSpecs = waitingForSpecs;
    retainedPlanning.addAll(retainedSnapshots);
  }

  /** Records the plan, asks the first slices to load, and plans again what jobs still read. */
  Behavior<Command> begin() {
    DatasetEntity.LOG.info(
        "Dataset '{}': snapshot {}, {} slices",
        dataset.name(),
        current.snapshotId(),
        current.size());
    writeRecord();
    dataset.registerLoaded();
    for (long snapshot : retainedPlanning) {
      dataset.plan(
          spec.withSnapshotId(snapshot),
          generation,
          (plan, failure) ->
              new DatasetEntity.RetainedPlanned(generation, snapshot, plan, failure));
    }
    answerWaitingSpecs();
    dispatch(current, firstLoadAtOnce);
    return settled();
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(DatasetEntity.Load.class, this::onLoad)
        .onMessage(DatasetEntity.Refresh.class, this::onRefresh)
        .onMessage(DatasetEntity.RefreshPlanned.class, this::onRefreshPlanned)
        .onMessage(DatasetEntity.AdmissionDecided.class, this::onRefreshAdmission)
        .onMessage(
            DatasetEntity.AskAdmission.class,
            ask -> {
              dataset.askAdmissionAgain();
              return this;
            })
        .onMessage(DatasetEntity.RetainedPlanned.class, this::onRetainedPlanned)
        .onMessage(DatasetEntity.SliceReply.class, this::onSliceReply)
        .onMessage(DatasetEntity.GetSliceSpec.class, this::onGetSliceSpec)
        .onMessage(
            DatasetEntity.GetStatus.class,
            get -> {
              get.replyTo().tell(status());
              return this;
            })
        .onMessage(DatasetEntity.GetLayout.class, this::onGetLayout)
        .onMessage(DatasetEntity.Hold.class, this::onHold)
        .onMessage(DatasetEntity.Unhold.class, this::onUnhold)
        .onMessage(DatasetEntity.ReleaseRetired.class, this::onReleaseRetired)
        .onMessage(DatasetEntity.AskMissing.class, ask -> onAskMissing())
        .onMessage(DatasetEntity.Drop.class, this::onDrop)
        .onMessage(DatasetEntity.RecordWritten.class, dataset::written)
        .onMessage(
            DatasetEntity.Stop.class,
            stop -> {
              releaseAdmission();
              releaseRefreshAdmission();
              return Behaviors.stopped();
            })
        // A plan of an earlier load: not this one's.
        .onMessage(Command.class, ignored -> this)
        .build();
  }

  /** LOADING until every slice answered once; then READY while all are held, else DEGRADED. */
  private DatasetState state() {
    if (!current.allKnown()) {
      return DatasetState.LOADING;
    }
    return current.complete() ? DatasetState.READY : DatasetState.DEGRADED;
  }

  /**
   * Logs and answers a change of state, and keeps asking missing slices again only while some are
   * missing.
   */
  private Behavior<Command> settled() {
    DatasetState now = state();
    if (now != DatasetState.LOADING) {
      releaseAdmission();
    }
    if (now != shown) {
      if (now == DatasetState.READY) {
        boolean first = secondsToReady == null;
        double seconds = (System.nanoTime() - requestedAtNanos) / 1e9;
        if (first) {
          secondsToReady = seconds;
        }
        DatasetEntity.LOG.info(
            "Dataset '{}' READY{}: {} rows, {} bytes in {} slices, {} s",
            dataset.name(),
            first ? "" : " again",
            current.rows(),
            current.bytes(),
            current.size(),
            String.format("%.2f", seconds));
        answer(waitingForReady);
      } else if (now == DatasetState.DEGRADED) {
        DatasetEntity.LOG.info(
            "Dataset '{}' DEGRADED: {} of {} slices held, the others reload",
            dataset.name(),
            current.presentCount(),
            current.size());
      }
      shown = now;
    }
    boolean missing = false;
    for (DatasetVersion version : versions()) {
      missing |= !version.complete();
    }
    dataset.askMissing(missing);
    return this;
  }

  private Behavior<Command> onLoad(DatasetEntity.Load load) {
    if (DatasetEntity.refused(
        dataset.name(), owner, load.requester(), "load over", status(), load.replyTo())) {
      return this;
    }
    if (!load.spec().equals(spec)) {
      dataset.refuseOtherSpec(load.spec(), spec, status(), load.replyTo());
    } else if (load.untilReady() && state() == DatasetState.LOADING) {
      waitingForReady.add(load.replyTo());
    } else {
      load.replyTo().tell(new LoadReply.Answered(status()));
    }
    return this;
  }

  private Behavior<Command> onRefresh(DatasetEntity.Refresh request) {
    if (DatasetEntity.refused(
        dataset.name(), owner, request.requester(), "refresh", status(), request.replyTo())) {
      return this;
    }
    if (request.spec() != null
        && !request.spec().withSnapshotId(null).equals(spec.withSnapshotId(null))) {
      dataset.refuseOtherSpec(request.spec(), spec, status(), request.replyTo());
      return this;
    }
    if (state() == DatasetState.LOADING) {
      // The gateway tells the caller the dataset is not ready.
      request.replyTo().tell(new LoadReply.Answered(status()));
      return this;
    }
    if (next == null && (refresh == null || !RefreshReport.RUNNING.equals(refresh.state()))) {
      refreshStartedNanos = System.nanoTime();
      refresh =
          new RefreshReport(RefreshReport.RUNNING, current.snapshotId(), null, 0, 0, 0, 0, null);
      DatasetEntity.LOG.info(
          "Dataset '{}': refreshing from snapshot {}", dataset.name(), current.snapshotId());
      dataset.plan(
          spec.withSnapshotId(null),
          generation,
          (plan, failure) -> new DatasetEntity.RefreshPlanned(generation, plan, failure));
    }
    if (request.untilDone()) {
      waitingForRefresh.add(request.replyTo());
    } else {
      request.replyTo().tell(new LoadReply.Answered(status()));
    }
    return this;
  }

  private Behavior<Command> onRefreshPlanned(DatasetEntity.RefreshPlanned planned) {
    if (planned.generation() != generation || next != null || refreshWaiting != null) {
      return this;
    }
    long from = current.snapshotId();
    if (planned.failure() != null) {
      Failure why =
          Failure.logged(
              DatasetEntity.LOG, "Refreshing dataset '" + dataset.name() + "'", planned.failure());
      DatasetEntity.LOG.warn(
          "Dataset '{}': refresh failed ({}): {}", dataset.name(), why.kind(), why.message());
      finishRefresh(new RefreshReport(RefreshReport.FAILED, from, null, 0, 0, 0, seconds(), why));
      return this;
    }
    ScanPlan plan = planned.plan();
    if (plan.snapshotId() == from) {
      finishRefresh(
          new RefreshReport(
              RefreshReport.UNCHANGED, from, from, current.size(), 0, 0, seconds(), null));
      return this;
    }
    // Only the slices no kept version holds load: the desk admits what they need on top.
    refreshWaiting = plan;
    refreshLoad = generation + "/refresh/" + plan.snapshotId();
    refreshQueued = false;
    dataset.admit(
        dataset.need(plan, spec.replicas(), slice -> heldReports(slice.sliceId()).isEmpty()),
        refreshLoad);
    return this;
  }

  private Behavior<Command> onRefreshAdmission(DatasetEntity.AdmissionDecided answer) {
    AdmissionDesk.Decided decided = answer.decided();
    if (refreshWaiting == null || !decided.load().equals(refreshLoad)) {
      return this;
    }
    switch (decided.verdict()) {
      case QUEUED -> {
        if (!refreshQueued) {
          refreshQueued = true;
          DatasetEntity.LOG.info(
              "Dataset '{}': refresh waits for memory: {}", dataset.name(), decided.reason());
        }
        return this;
      }
      case REFUSED -> {
        dataset.admissionDecided();
        ScanPlan refused = refreshWaiting;
        refreshWaiting = null;
        refreshLoad = null;
        Failure why = new Failure(ErrorKind.RESOURCE_EXHAUSTED, decided.reason());
        DatasetEntity.LOG.warn(
            "Dataset '{}': refresh refused ({}): {}", dataset.name(), why.kind(), why.message());
        finishRefresh(
            new RefreshReport(
                RefreshReport.FAILED,
                current.snapshotId(),
                refused.snapshotId(),
                0,
                0,
                0,
                seconds(),
                why));
        return this;
      }
      default -> {
        dataset.admissionDecided();
        ScanPlan plan = refreshWaiting;
        refreshWaiting = null;
        return startRefresh(
            plan,
            decided.slicesAtOnce() > 0
                ? Math.min(decided.slicesAtOnce(), dataset.loadsAtOnce())
                : dataset.loadsAtOnce());
      }
    }
  }

  /** Loads the refresh's new slices, {@code slicesAtOnce} at a time, as admitted. */
  private Behavior<Command> startRefresh(ScanPlan plan, int slicesAtOnce) {
    next = new DatasetVersion(plan, spec.replicas());
    int kept = takeHeld(next);
    refresh =
        new RefreshReport(
            RefreshReport.RUNNING,
            current.snapshotId(),
            plan.snapshotId(),
            kept,
            next.size() - kept,
            0,
            seconds(),
            null);
    DatasetEntity.LOG.info(
        "Dataset '{}': refresh to snapshot {} keeps {} slices, loads {}",
        dataset.name(),
        plan.snapshotId(),
        kept,
        next.size() - kept);
    refreshSlicesAtOnce = slicesAtOnce;
    dispatch(next, slicesAtOnce);
    switchIfRefreshed();
    return settled();
  }

  /** Ends the refresh's memory reservation (or its wait), once. */
  private void releaseRefreshAdmission() {
    refreshWaiting = null;
    if (refreshLoad != null) {
      dataset.releaseAdmission(refreshLoad);
      refreshLoad = null;
    }
  }

  /**
   * Marks the slices of {@code version} that a kept version holds now as held; answers how many.
   */
  private int takeHeld(DatasetVersion version) {
    int kept = 0;
    for (String sliceId : version.sliceIds()) {
      List<SliceEntity.Loaded> held = heldReports(sliceId);
      if (!held.isEmpty()) {
        held.forEach(version::loaded);
        kept++;
      }
    }
    return kept;
  }

  /** The reports of the copies of a slice that some kept version holds now. */
  private List<SliceEntity.Loaded> heldReports(String sliceId) {
    for (DatasetVersion version : versions()) {
      List<SliceEntity.Loaded> reports = version.heldReports(sliceId);
      if (!reports.isEmpty()) {
        return reports;
      }
    }
    return List.of();
  }

  /** Once a refresh's slices are all held, readers switch to it. */
  private void switchIfRefreshed() {
    if (next == null || !next.complete()) {
      return;
    }
    DatasetVersion replaced = current;
    String replacedFingerprint = fingerprint(replaced);
    current = next;
    next = null;
    releaseRefreshAdmission();
    int freed = 0;
    if (isHeld(replacedFingerprint)) {
      retained.put(replaced.snapshotId(), replaced);
    } else {
      freed = retire(replaced);
    }
    writeRecord();
    RefreshReport running = refresh;
    DatasetEntity.LOG.info(
        "Dataset '{}' refreshed to snapshot {}: {} slices kept, {} loaded, {} to free, {} rows",
        dataset.name(),
        current.snapshotId(),
        running.kept(),
        running.loaded(),
        freed,
        current.rows());
    finishRefresh(
        new RefreshReport(
            RefreshReport.DONE,
            running.fromSnapshot(),
            current.snapshotId(),
            running.kept(),
            running.loaded(),
            freed,
            seconds(),
            null));
  }

  private void finishRefresh(RefreshReport report) {
    refresh = report;
    answer(waitingForRefresh);
  }

  private double seconds() {
    return (System.nanoTime() - refreshStartedNanos) / 1e9;
  }

  /** A refresh's new slice failed to load: the refresh fails, the dataset serves on. */
  private void failRefresh(Failure why) {
    DatasetVersion abandoned = next;
    next = null;
    releaseRefreshAdmission();
    retire(abandoned);
    DatasetEntity.LOG.warn(
        "Dataset '{}': refresh failed ({}): {}", dataset.name(), why.kind(), why.message());
    finishRefresh(
        new RefreshReport(
            RefreshReport.FAILED,
            refresh.fromSnapshot(),
            abandoned.snapshotId(),
            refresh.kept(),
            refresh.loaded(),
            0,
            seconds(),
            why));
  }

  private Behavior<Command> onRetainedPlanned(DatasetEntity.RetainedPlanned planned) {
    if (planned.generation() != generation || !retainedPlanning.remove(planned.snapshotId())) {
      return this;
    }
    if (planned.failure() != null) {
      DatasetEntity.LOG.warn(
          "Dataset '{}': the layout of snapshot {}, kept for jobs, could not be planned again: {}",
          dataset.name(),
          planned.snapshotId(),
          Failure.of(planned.failure()).message());
    } else {
      DatasetVersion version = new DatasetVersion(planned.plan(), spec.replicas());
      takeHeld(version);
      retained.put(version.snapshotId(), version);
      dispatch(version, Integer.MAX_VALUE);
    }
    answerWaitingSpecs();
    return settled();
  }

  private Behavior<Command> onAskMissing() {
    for (DatasetVersion version : versions()) {
      version.missingDispatched().forEach(copy -> dataset.load(copy.spec(), copy.entityId()));
    }
    return settled();
  }

  /** Every version kept: serving, refreshing and retained. */
  private List<DatasetVersion> versions() {
    List<DatasetVersion> all = new ArrayList<>();
    all.add(current);
    if (next != null) {
      all.add(next);
    }
    all.addAll(retained.values());
    return all;
  }

  private void dispatch(DatasetVersion version, int inFlight) {
    version.nextToDispatch(inFlight).forEach(slice -> dataset.load(slice, spec.replicas()));
  }

  private Behavior<Command> onGetSliceSpec(DatasetEntity.GetSliceSpec get) {
    if (!retainedPlanning.isEmpty()) {
      waitingForSpecs.add(get); // the slice may belong to a layout kept for jobs
      return this;
    }
    // Every slice of the layout being served has loaded once: one of them that asks is starting
    // again (a refresh's new slices belong to the layout still loading).
    boolean serving = state() != DatasetState.LOADING;
    String sliceId = SliceCopies.sliceOf(get.entityId());
    int copy = SliceCopies.copyOf(get.entityId());
    SliceSpec slice = null;
    boolean restart = false;
    for (DatasetVersion version : versions()) {
      if (slice == null) {
        slice = version.spec(sliceId);
        restart = slice != null && serving && version == current;
      }
      // The copy restarted somewhere (its node left or failed): missing until it reports.
      version.missing(sliceId, copy);
    }
    if (slice == null || copy >= spec.replicas()) {
      DatasetEntity.LOG.debug(
          "Dataset '{}' (generation {}) does not want slice {}",
          dataset.name(),
          generation,
          get.entityId());
      DatasetEntity.notWanted(get);
      return this;
    }
    get.replyTo()
        .tell(new DatasetEntity.SliceAssignment.Assigned(slice, dataset.sliceReplies(), restart));
    return settled();
  }

  private void answerWaitingSpecs() {
    if (!retainedPlanning.isEmpty()) {
      return;
    }
    List<DatasetEntity.GetSliceSpec> waiting = new ArrayList<>(waitingForSpecs);
    waitingForSpecs.clear();
    waiting.forEach(this::onGetSliceSpec);
  }

  private Behavior<Command> onSliceReply(DatasetEntity.SliceReply reply) {
    String sliceId = reply.result().sliceId();
    if (reply.result() instanceof SliceEntity.LoadFailed failed) {
      Failure why =
          new Failure(
              failed.failure().kind(),
              "slice '"
                  + failed.sliceId()
                  + "' of dataset '"
                  + dataset.name()
                  + "': "
                  + failed.failure().message());
      if (current.contains(sliceId)) {
        return fail(why);
      }
      if (next != null && next.contains(sliceId)) {
        failRefresh(why);
      }
      return settled();
    }
    SliceEntity.Loaded loaded = (SliceEntity.Loaded) reply.result();
    for (DatasetVersion version : versions()) {
      version.loaded(loaded);
    }
    dispatch(current, firstLoadAtOnce);
    if (next != null) {
      dispatch(next, refreshSlicesAtOnce);
    }
    switchIfRefreshed();
    return settled();
  }

  /** A slice of the serving layout failed: every slice is freed and the dataset FAILED. */
  private Behavior<Command> fail(Failure why) {
    releaseAll();
    releaseAdmission();
    releaseRefreshAdmission();
    dataset.forgetRecord();
    dataset.askMissing(false);
    FailedDataset failed = new FailedDataset(dataset, spec, why, secondsToReady, refresh, owner);
    failed.refuse(waitingForReady);
    failed.refuse(waitingForRefresh);
    waitingForSpecs.forEach(DatasetEntity::notWanted);
    return failed;
  }

  /** Ends the load's memory reservation, once; loads waiting for memory are decided again. */
  private void releaseAdmission() {
    if (admissionHeld) {
      admissionHeld = false;
      dataset.releaseAdmission(Long.toString(generation));
    }
  }

  /** Frees every slice of every version now (drop or failure). */
  private void releaseAll() {
    Set<String> all = new LinkedHashSet<>(retiring);
    versions().forEach(version -> all.addAll(version.sliceIds()));
    all.forEach(sliceId -> dataset.release(sliceId, spec.replicas()));
    retiring.clear();
  }

  /**
   * Schedules the slices of a replaced version that no kept version uses to be freed after the
   * retire linger; answers how many.
   */
  private int retire(DatasetVersion replaced) {
    List<String> unused = new ArrayList<>();
    for (String sliceId : replaced.sliceIds()) {
      if (!inUse(sliceId)) {
        unused.add(sliceId);
      }
    }
    if (!unused.isEmpty()) {
      retiring.addAll(unused);
      dataset.releaseAfterLinger(unused);
    }
    return unused.size();
  }

  private boolean inUse(String sliceId) {
    for (DatasetVersion version : versions()) {
      if (version.contains(sliceId)) {
        return true;
      }
    }
    return false;
  }

  private Behavior<Command> onReleaseRetired(DatasetEntity.ReleaseRetired retire) {
    boolean changed = false;
    for (String sliceId : retire.sliceIds()) {
      // A later refresh may have taken the slice back (the same files again).
      if (retiring.remove(sliceId) && !inUse(sliceId)) {
        dataset.release(sliceId, spec.replicas());
        changed = true;
      }
    }
    if (changed) {
      writeRecord();
    }
    return this;
  }

  private Behavior<Command> onHold(DatasetEntity.Hold hold) {
    Set<String> previous = holders.put(hold.job(), new HashSet<>(hold.fingerprints()));
    if (!new HashSet<>(hold.fingerprints()).equals(previous)) {
      pruneRetained();
      writeRecord();
    }
    return settled();
  }

  private Behavior<Command> onUnhold(DatasetEntity.Unhold unhold) {
    if (holders.remove(unhold.job()) != null) {
      pruneRetained();
      writeRecord();
    }
    return settled();
  }

  /** Retires the kept versions no job holds any more. */
  private void pruneRetained() {
    for (DatasetVersion version : new ArrayList<>(retained.values())) {
      String fingerprint = fingerprint(version);
      if (fingerprint != null && !isHeld(fingerprint)) {
        retained.remove(version.snapshotId());
        int freed = retire(version);
        DatasetEntity.LOG.info(
            "Dataset '{}': layout of snapshot {} no longer read by any job; {} slices to free",
            dataset.name(),
            version.snapshotId(),
            freed);
      }
    }
  }

  private boolean isHeld(String fingerprint) {
    for (Set<String> held : holders.values()) {
      if (held.contains(fingerprint)) {
        return true;
      }
    }
    return false;
  }

  /** A version's layout fingerprint, once every slice answered; else null. */
  private String fingerprint(DatasetVersion version) {
    return version.fingerprint(dataset.name(), spec.filter());
  }

  private void writeRecord() {
    Map<String, List<String>> held = new LinkedHashMap<>();
    holders.forEach((job, fps) -> held.put(job, List.copyOf(fps)));
    Set<Long> kept = new LinkedHashSet<>(retained.keySet());
    kept.addAll(retainedPlanning);
    dataset.writeRecord(
        new DatasetRecord(
            spec,
            generation,
            current.snapshotId(),
            List.copyOf(kept),
            held,
            List.copyOf(retiring),
            owner));
  }

  private void answer(List<ActorRef<LoadReply>> waiters) {
    LoadReply reply = new LoadReply.Answered(status());
    waiters.forEach(w -> w.tell(reply));
    waiters.clear();
  }

  private Behavior<Command> onGetLayout(DatasetEntity.GetLayout get) {
    if (state() == DatasetState.LOADING) {
      get.replyTo().tell(new DatasetEntity.LayoutReply.Missing(status()));
      return this;
    }
    DatasetVersion version = current;
    if (get.fingerprint() != null && !get.fingerprint().equals(fingerprint(current))) {
      version = null;
      for (DatasetVersion kept : retained.values()) {
        if (get.fingerprint().equals(fingerprint(kept))) {
          version = kept;
        }
      }
    }
    get.replyTo()
        .tell(
            version == null
                ? new DatasetEntity.LayoutReply.Missing(status())
                : new DatasetEntity.LayoutReply.Found(
                    version.layout(dataset.name(), spec.filter()), status()));
    return this;
  }

  private Behavior<Command> onDrop(DatasetEntity.Drop drop) {
    if (DatasetEntity.refused(
        dataset.name(), owner, drop.requester(), "drop", status(), drop.replyTo())) {
      return this;
    }
    DatasetStatus last = status();
    releaseAll();
    releaseAdmission();
    releaseRefreshAdmission();
    return dataset.drop(drop, last, List.of(waitingForReady, waitingForRefresh), waitingForSpecs);
  }

  DatasetStatus status() {
    List<DatasetStatus.RetainedLayout> kept = new ArrayList<>();
    for (DatasetVersion version : retained.values()) {
      String fingerprint = fingerprint(version);
      List<String> heldBy = new ArrayList<>();
      holders.forEach(
          (job, fps) -> {
            if (fingerprint != null && fps.contains(fingerprint)) {
              heldBy.add(job);
            }
          });
      kept.add(
          new DatasetStatus.RetainedLayout(
              version.snapshotId(), fingerprint, version.size(), version.rows(), heldBy));
    }
    return new DatasetStatus(
        dataset.name(),
        current.plan().source(),
        state(),
        current.presentCount(),
        current.size(),
        current.rows(),
        current.bytes(),
        current.snapshotId(),
        null,
        secondsToReady,
        current.decoders(),
        refresh,
        kept,
        owner,
        spec.replicas());
  }
}
