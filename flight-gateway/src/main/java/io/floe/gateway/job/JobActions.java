package io.floe.gateway.job;

import static io.floe.protocol.InvalidRequestException.reading;

import io.floe.auth.Caller;
import io.floe.auth.Permissions;
import io.floe.dataset.DatasetEntity;
import io.floe.gateway.BatchSource;
import io.floe.gateway.ClusterAnswers;
import io.floe.gateway.FlightErrors;
import io.floe.gateway.GatewaySettings;
import io.floe.gateway.HeldSlices;
import io.floe.gateway.ReadAheadBatches;
import io.floe.gateway.dataset.DatasetQueries;
import io.floe.job.JobRead;
import io.floe.job.JobSpec;
import io.floe.job.PinnedLayout;
import io.floe.job.RankShare;
import io.floe.job.TailPolicy;
import io.floe.protocol.Actions;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.InvalidRequestException;
import io.floe.protocol.JobReadRequest;
import io.floe.protocol.JobRequest;
import io.floe.protocol.JobRequests;
import io.floe.spec.DatasetLayout;
import io.floe.store.LoadedSlice;
import io.floe.store.SliceStore;
import io.floe.ticket.JobTicket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * A training job's whole serving path on a node, one method per request: the job actions (register,
 * status, list, drop, and the dynamic mode's lease and ack), planning a rank's read of an epoch
 * ({@link JobReadPlanner}), and opening the stream of one of its tickets ({@link NodeJobBatches},
 * which gathers this node's rows of each batch in the epoch's order with {@link RowGather}). Which
 * layout a job's epoch reads comes from {@link JobLayouts}; the epoch order this node computes once
 * per layout, epoch and order is cached in {@link JobOrders}.
 *
 * <p>A job is its registering caller's: it may register jobs only on datasets its scope reaches,
 * sees and plans only jobs on those, and only it (or an admin) may drop the job, which the job's
 * entity checks against the owner it records.
 */
public final class JobActions {
  private final DatasetQueries datasets;
  private final JobQueries jobs;
  private final JobOrders orders = new JobOrders();
  private final JobReadPlanner planner;
  private final JobLayouts layouts;
  private final ClusterAnswers answers;
  private final SliceStore slices;
  private final Executor gathering = gatheringThreads();

  /**
   * Working arrays of record batches being gathered, shared by the node's job streams: a few per
   * gathering thread (each stream plans up to gather-ahead record batches beyond the one it
   * gathers).
   */
  private final GatherStagings stagings =
      new GatherStagings(4 * Runtime.getRuntime().availableProcessors());

  private final int gatherAhead;

  public JobActions(
      ActorSystem<?> system,
      DatasetQueries datasets,
      GatewaySettings settings,
      ClusterAnswers answers,
      SliceStore slices) {
    this.datasets = datasets;
    this.slices = slices;
    this.jobs = new JobQueries(system, settings);
    this.planner = new JobReadPlanner(settings.tickets(), orders);
    this.layouts = new JobLayouts(datasets, jobs, answers, orders);
    this.gatherAhead = settings.gatherAhead();
    this.answers = answers;
  }

  /** Registers a job against the dataset's current layout, after checking it can be served. */
  public CompletionStage<byte[]> register(Caller caller, byte[] body) {
    JobSpec spec = reading(() -> JobRequest.parse(body));
    Permissions.checkReaches(caller, spec.dataset());
    return datasets
        .layout(spec.dataset())
        .thenCompose(
            answer -> {
              if (!(answer.value() instanceof DatasetEntity.LayoutReply.Found found)) {
                throw answers.notReady(answer.value().status());
              }
              DatasetLayout layout = found.layout();
              check(spec, layout);
              String fingerprint = layout.fingerprint();
              orders.remember(fingerprint, layout);
              return jobs.register(
                  spec,
                  new PinnedLayout(layout.snapshotId(), fingerprint, layout.rows()),
                  caller.owner());
            })
        .thenApply(status -> JobStatusReplies.of(status).encode());
  }

  /** Refuses a job its dataset's layout cannot serve, naming the setting at fault. */
  private static void check(JobSpec spec, DatasetLayout layout) {
    JobSchemas.project(JobSchemas.of(layout), spec.columns(), layout.name());
    if (spec.tail() == TailPolicy.DROP && layout.rows() < spec.batchRows()) {
      throw new InvalidRequestException(
          String.format(
              "Invalid batch_rows %d: dataset '%s' has only %d rows, so with tail"
                  + " 'drop' an epoch would have no batch",
              spec.batchRows(), layout.name(), layout.rows()));
    }
    long blocks = 0;
    for (long rows : layout.sliceRowCounts()) {
      blocks += (rows + spec.blockRows() - 1) / spec.blockRows();
    }
    if (blocks > JobSpec.MAX_BLOCKS) {
      throw new InvalidRequestException(
          String.format(
              "Invalid block_rows %d: dataset '%s' would be cut into %d blocks (at most"
                  + " %d: an epoch's order holds a few bytes per block)",
              spec.blockRows(), layout.name(), blocks, JobSpec.MAX_BLOCKS));
    }
  }

  public CompletionStage<byte[]> status(Caller caller, byte[] body) {
    JobRequests.JobStatusRequest asked = reading(() -> JobRequests.JobStatusRequest.parse(body));
    return jobs.status(asked.job(), asked.epoch())
        .thenApply(
            status -> {
              Permissions.checkReaches(caller, status.spec().dataset());
              return JobStatusReplies.of(status).encode();
            });
  }

  /** Every job on a dataset the caller's scope reaches. */
  public CompletionStage<byte[]> list(Caller caller) {
    return jobs.list()
        .thenApply(
            all ->
                io.floe.protocol.JobStatusReply.encodeList(
                    all.stream()
                        .filter(status -> caller.scope().allows(status.spec().dataset()))
                        .map(JobStatusReplies::of)
                        .toList()));
  }

  public CompletionStage<byte[]> drop(Caller caller, byte[] body) {
    return jobs.drop(
            reading(() -> JobRequests.JobName.parse(body, Actions.DROP_JOB)).job(),
            caller.requester())
        .thenApply(status -> JobStatusReplies.of(status).asDropped().encode());
  }

  public CompletionStage<byte[]> lease(byte[] body) {
    JobRequests.LeaseRequest lease = reading(() -> JobRequests.LeaseRequest.parse(body));
    return jobs.lease(lease.job(), lease.epoch(), lease.worker())
        .thenApply(reply -> LeaseReplies.of(lease.epoch(), reply).encode());
  }

  public CompletionStage<byte[]> ack(byte[] body) {
    JobRequests.AckRequest ack = reading(() -> JobRequests.AckRequest.parse(body));
    return jobs.ack(ack.job(), ack.epoch(), ack.lease(), ack.worker())
        .thenApply(outcome -> io.floe.protocol.AckReply.valueOf(outcome.name()).encode());
  }

  /** Plans a rank's read of an epoch (or part of it) on the layout that epoch reads. */
  public FlightInfo plan(Caller caller, JobReadRequest request, FlightDescriptor descriptor) {
    JobLayouts.EpochLayout epoch = layouts.forPlan(request.job(), request.epoch(), request.avoid());
    Permissions.checkReaches(caller, epoch.job().spec().dataset());
    return planner.plan(
        epoch.job(), epoch.layout(), request, descriptor, caller.ticketHolder().orElse(null));
  }

  /**
   * The stream of a job ticket's batches, gathered from the slices the plan placed on this node:
   * SLICE_NOT_HELD (plan again) when this node's view of the placement is not the plan's or it no
   * longer holds one of them.
   */
  public BatchSource open(JobTicket ticket) {
    JobLayouts.PlacedLayout placed = layouts.forTicket(ticket);
    DatasetLayout layout = placed.layout();
    Placement placement = placed.placement();
    JobRead read = ticket.read();
    long epochBatches = read.shape(layout.rows()).batches();
    if (read.batchTo() > epochBatches) {
      // A ticket this cluster signed for another epoch shape than the layout's: the node's fault.
      throw FlightErrors.error(
          ErrorCode.INTERNAL,
          String.format(
              "Ticket batches up to %d exceed the epoch's %d", read.batchTo(), epochBatches));
    }
    int[] localOf = new int[layout.slices().size()];
    List<LoadedSlice.Lease> leases = new ArrayList<>();
    int here = placement.holders().indexOf(ticket.holder());
    try {
      for (int s = 0; s < localOf.length; s++) {
        localOf[s] = -1;
        DatasetLayout.SliceRows slice = layout.slices().get(s);
        if (placement.holderOf(s) == here) {
          String id = slice.sliceId();
          leases.add(slices.acquire(id).orElseThrow(() -> FlightErrors.sliceNotHeld(id)));
          localOf[s] = leases.size() - 1;
        }
      }
      if (leases.isEmpty()) {
        throw FlightErrors.error(
            ErrorCode.SLICE_NOT_HELD,
            String.format(
                "No slice of dataset '%s' is placed on %s; plan the read again",
                ticket.dataset(), ticket.holder()));
      }
      RankShare share =
          read.share(
              layout.rows(), orders.order(read.layout(), layout, read.order(), read.epoch()));
      Schema projected =
          JobSchemas.project(leases.get(0).slice().schema(), ticket.columns(), ticket.dataset());
      NodeJobBatches batches =
          new NodeJobBatches(
              leases, localOf, read, share, projected, ticket.batchesPerMessage(), stagings);
      List<LoadedSlice> held = new ArrayList<>(leases.size());
      leases.forEach(lease -> held.add(lease.slice()));
      return HeldSlices.watching(
          gatherAhead == 0 ? batches : new ReadAheadBatches(batches, gathering, gatherAhead), held);
    } catch (RuntimeException e) {
      leases.forEach(LoadedSlice.Lease::close);
      throw e;
    }
  }

  /**
   * Threads that gather job batches ahead of their streams, one per core at most, none kept when
   * idle.
   */
  private static Executor gatheringThreads() {
    int cores = Runtime.getRuntime().availableProcessors();
    AtomicInteger count = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            cores,
            cores,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            task -> {
              Thread thread = new Thread(task, "floe-gather-" + count.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}
