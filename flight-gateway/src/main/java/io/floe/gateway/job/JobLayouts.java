package io.floe.gateway.job;

import io.floe.dataset.DatasetEntity;
import io.floe.dataset.DatasetState;
import io.floe.gateway.ClusterAnswers;
import io.floe.gateway.FlightErrors;
import io.floe.gateway.dataset.DatasetQueries;
import io.floe.job.JobStatus;
import io.floe.protocol.ErrorCode;
import io.floe.spec.DatasetLayout;
import io.floe.ticket.JobTicket;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Which layout a job reads in an epoch, and where its slices are: the one place that asks the job
 * and dataset entities for it, for a plan and for the stream of a ticket. An epoch reads the layout
 * it began on (for a new epoch, the dataset's newest); a dataset keeps the layouts its jobs still
 * read after it moves on, and one it no longer holds is LAYOUT_CHANGED, never silently another.
 */
final class JobLayouts {
  /** A job as its epoch reads it: its status and the layout of that epoch, as placed now. */
  record EpochLayout(JobStatus job, DatasetLayout layout) {}

  /** A ticket's layout and its placement as the plan made it (the serving node's own slices). */
  record PlacedLayout(DatasetLayout layout, Placement placement) {}

  /**
   * How long a plan (or a stream whose ticket this node's copy of the layout does not place) waits
   * for the job's and dataset's entities before using what this node last heard from them. Short:
   * the first plan after a node died knows nothing of it yet, and the entities may have lived
   * there; what an epoch reads does not change, and a layout whose slices moved since is refused by
   * the serving node (SLICE_NOT_HELD) and planned again.
   */
  static final Duration PLAN_PATIENCE = Duration.ofMillis(300);

  private final DatasetQueries datasets;
  private final JobQueries jobs;
  private final ClusterAnswers answers;
  private final JobOrders orders;

  JobLayouts(DatasetQueries datasets, JobQueries jobs, ClusterAnswers answers, JobOrders orders) {
    this.datasets = datasets;
    this.jobs = jobs;
    this.answers = answers;
    this.orders = orders;
  }

  /**
   * The layout epoch {@code epoch} of {@code job} reads, with where its slices are now (planning
   * needs that, so it comes from the dataset, not this node's copy). The entities get {@link
   * #PLAN_PATIENCE} to answer before the last answers this node had are used, unless those would
   * place a slice on a node the reader could not reach ({@code avoid}; a slice with no copy
   * elsewhere): then they get {@link DatasetQueries#PATIENCE}, since a fresh answer, which comes as
   * soon as the dataset's entity is back or the slice has moved, is the only one that helps.
   */
  EpochLayout forPlan(String job, long epoch, List<String> avoid) {
    EpochLayout quick = forPlan(job, epoch, PLAN_PATIENCE);
    if (avoid.isEmpty()
        || java.util.Collections.disjoint(Placement.of(quick.layout(), avoid).holders(), avoid)) {
      return quick;
    }
    return forPlan(job, epoch, DatasetQueries.PATIENCE);
  }

  private EpochLayout forPlan(String job, long epoch, Duration patience) {
    JobStatus status = answers.await(jobs.statusForPlan(job, epoch, patience));
    String dataset = status.spec().dataset();
    String fingerprint = status.layout().fingerprint();
    DatasetEntity.LayoutReply serving = answers.await(datasets.layout(dataset, patience)).value();
    DatasetLayout layout =
        serving instanceof DatasetEntity.LayoutReply.Found found
                && found.layout().fingerprint().equals(fingerprint)
            ? found.layout()
            : held(dataset, fingerprint, job, status.epoch());
    return new EpochLayout(status, layout);
  }

  /**
   * The layout a ticket reads, placed as its plan placed it: this node's copy, or the dataset's
   * when the copy's placement is not the plan's; SLICE_NOT_HELD (plan again) when slices moved. The
   * dataset's entity gets {@link #PLAN_PATIENCE}, as for a plan, before a layout this node heard
   * since is served if it places the ticket as its plan did; otherwise the stream waits for the
   * entity's answer.
   */
  PlacedLayout forTicket(JobTicket ticket) {
    String fingerprint = ticket.read().layout();
    Optional<PlacedLayout> copy = asPlanned(orders.layout(fingerprint), ticket);
    if (copy.isPresent()) {
      return copy.get();
    }
    // This node's copy may predate a move, or it has none: ask the dataset. Its entity may have
    // lived on a node that just died (seconds until it runs elsewhere). A layout that places the
    // signed ticket as its plan did is as safe to serve as this node's copy: a slice that moved is
    // not held here, and the read answers SLICE_NOT_HELD and is planned again.
    CompletableFuture<DatasetEntity.LayoutReply> asked =
        datasets.layout(ticket.dataset(), fingerprint).toCompletableFuture();
    if (!answersWithin(asked, PLAN_PATIENCE)) {
      Optional<PlacedLayout> known = known(ticket);
      if (known.isPresent()) {
        return known.get();
      }
    }
    DatasetLayout layout =
        held(
            answers.await(asked),
            ticket.dataset(),
            fingerprint,
            ticket.job(),
            ticket.read().epoch());
    return asPlanned(layout, ticket)
        .orElseThrow(
            () ->
                FlightErrors.error(
                    ErrorCode.SLICE_NOT_HELD,
                    String.format(
                        "Dataset '%s' moved slices since this read of job '%s' was planned; plan"
                            + " it again",
                        ticket.dataset(), ticket.job())));
  }

  /**
   * A layout with the ticket's fingerprint this node knows without asking: its copy (a plan may
   * have brought a newer one meanwhile) or the one it last heard the dataset serve (a plan or a
   * shard read of the dataset through this node), placed as the ticket's plan placed it.
   */
  private Optional<PlacedLayout> known(JobTicket ticket) {
    String fingerprint = ticket.read().layout();
    return asPlanned(orders.layout(fingerprint), ticket)
        .or(
            () ->
                datasets
                    .lastLayout(ticket.dataset(), fingerprint)
                    .flatMap(layout -> asPlanned(layout, ticket)));
  }

  /** The layout placed as the ticket's plan placed it, if it does; none for no layout. */
  private static Optional<PlacedLayout> asPlanned(DatasetLayout layout, JobTicket ticket) {
    if (layout == null) {
      return Optional.empty();
    }
    Placement placement = Placement.of(layout, ticket.avoid());
    return placement.fingerprint().equals(ticket.placement())
        ? Optional.of(new PlacedLayout(layout, placement))
        : Optional.empty();
  }

  /** Whether the ask has its answer (or its failure) within {@code patience}. */
  private static boolean answersWithin(CompletableFuture<?> asked, Duration patience) {
    return asked
        .handle((reply, failure) -> true)
        .completeOnTimeout(false, patience.toMillis(), TimeUnit.MILLISECONDS)
        .join();
  }

  /**
   * The layout with this fingerprint: the one the dataset serves or one it keeps for the jobs that
   * read it.
   */
  private DatasetLayout held(String dataset, String fingerprint, String job, long epoch) {
    return held(
        answers.await(datasets.layout(dataset, fingerprint)), dataset, fingerprint, job, epoch);
  }

  /** {@link #held(String, String, String, long)} from the dataset's answer. */
  private DatasetLayout held(
      DatasetEntity.LayoutReply reply, String dataset, String fingerprint, String job, long epoch) {
    if (reply instanceof DatasetEntity.LayoutReply.Found found) {
      orders.remember(fingerprint, found.layout());
      return found.layout();
    }
    DatasetState state = reply.status().state();
    DatasetLayout known = orders.layout(fingerprint);
    if ((state == DatasetState.PLANNING || state == DatasetState.LOADING) && known != null) {
      // A dataset entity that started again elsewhere (its node died) plans its slices again,
      // while the slices on the nodes that stayed serve all along: the layout this node last knew
      // places the read on them (and, for a reader avoiding the dead node, on the copies of its
      // slices). A slice that has moved since answers SLICE_NOT_HELD, and the read is planned
      // again.
      return known;
    }
    if (state != DatasetState.READY && state != DatasetState.DEGRADED) {
      throw answers.notReady(reply.status());
    }
    throw FlightErrors.error(
        ErrorCode.LAYOUT_CHANGED,
        String.format(
            "Dataset '%s' changed: it no longer holds layout %s, which job '%s' read epoch %d"
                + " from (it serves snapshot %s now); register the job again or read a later"
                + " epoch",
            dataset, fingerprint, job, epoch, reply.status().snapshotId()));
  }
}
