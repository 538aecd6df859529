package io.floe.gateway;

import static io.floe.protocol.InvalidRequestException.reading;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.auth.Permissions;
import io.floe.auth.Role;
import io.floe.dataset.DatasetEntity;
import io.floe.dataset.DatasetLayout;
import io.floe.dataset.DatasetState;
import io.floe.dataset.DatasetStatus;
import io.floe.dataset.RefreshReport;
import io.floe.job.EpochShape;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.job.RankShare;
import io.floe.job.TailPolicy;
import io.floe.job.entity.JobEntity;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.InvalidRequestException;
import io.floe.protocol.JobReadRequest;
import io.floe.protocol.JobRequest;
import io.floe.protocol.JobRequests;
import io.floe.protocol.Json;
import io.floe.protocol.LoadRequest;
import io.floe.protocol.NameRequest;
import io.floe.protocol.ReadRequest;
import io.floe.protocol.RefreshRequest;
import io.floe.store.LoadedSlice;
import io.floe.store.SliceStore;
import io.floe.ticket.FloeTicket;
import io.floe.ticket.JobTicket;
import io.floe.ticket.SignedTicket;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.vector.types.pojo.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every reader request enters a node. Actions and planning ask the dataset entities (wherever
 * they live); {@code DoGet} streams straight from this node's {@link SliceStore}. Every failure
 * leaves as a Flight status naming what was wrong; nothing a request does can take the node down.
 */
public final class FloeProducer extends NoOpFlightProducer implements TicketStreams {
  public static final String LOAD = "load";
  public static final String STATUS = "status";
  public static final String DROP = "drop";
  public static final String REFRESH = "refresh";
  public static final String LIST = "list";
  public static final String CLUSTER = "cluster";
  public static final String REGISTER_JOB = "register_job";
  public static final String JOB_STATUS = "job_status";
  public static final String LIST_JOBS = "list_jobs";
  public static final String DROP_JOB = "drop_job";
  public static final String LEASE = "lease";
  public static final String ACK = "ack";

  private static final Logger LOG = LoggerFactory.getLogger(FloeProducer.class);

  /** An action: what it is called and does, the role it needs, and its handler. */
  private record ActionRoute(ActionType type, Role role, ActionHandler handler) {}

  /** Answers one action's body; a request it cannot read is an {@link InvalidRequestException}. */
  @FunctionalInterface
  private interface ActionHandler {
    CompletionStage<byte[]> handle(byte[] body);
  }

  private final DatasetQueries datasets;
  private final SliceStore slices;
  private final GatewaySettings settings;
  private final ReadPlanner planner;
  private final JobQueries jobs;
  private final JobOrders orders = new JobOrders();
  private final JobReadPlanner jobPlanner;
  private final ClusterView clusterView;
  private final ShardingQuorum quorum;
  private final CallMetrics calls;
  private final Map<String, ActionRoute> actions;

  /**
   * @param memory the node's root allocator, whose use and limit the {@code cluster} action shows
   * @param meters where plan and action latencies are recorded
   */
  public FloeProducer(
      DatasetQueries datasets,
      SliceStore slices,
      GatewaySettings settings,
      org.apache.arrow.memory.BufferAllocator memory,
      io.micrometer.core.instrument.MeterRegistry meters) {
    this.datasets = datasets;
    this.slices = slices;
    this.settings = settings;
    this.planner = new ReadPlanner(settings.tickets());
    this.jobs = new JobQueries(datasets.system(), settings);
    this.jobPlanner = new JobReadPlanner(settings.tickets(), orders);
    this.quorum = new ShardingQuorum(datasets.system());
    this.clusterView = new ClusterView(datasets.system(), quorum, memory, slices);
    this.actions = routes();
    this.calls = new CallMetrics(meters, actions.keySet());
  }

  /** Every action, in the order listActions gives them. */
  private Map<String, ActionRoute> routes() {
    Map<String, ActionRoute> routes = new LinkedHashMap<>();
    route(
        routes,
        LOAD,
        "Load a dataset from an Iceberg table; body: dataset spec JSON",
        Role.OPERATOR,
        this::load);
    route(
        routes,
        STATUS,
        "A dataset's state and size; body: {\"name\": ...}",
        Role.READER,
        this::status);
    route(
        routes,
        DROP,
        "Drop a dataset and free its memory; body: {\"name\": ...}",
        Role.OPERATOR,
        this::drop);
    route(
        routes,
        REFRESH,
        "Move a dataset to its table's newest snapshot, loading only what changed;"
            + " body: {\"name\": ..., \"wait\": true}",
        Role.OPERATOR,
        this::refresh);
    route(routes, LIST, "Every loaded dataset's status", Role.READER, body -> list());
    route(
        routes,
        CLUSTER,
        "The cluster's members as this node sees them",
        Role.READER,
        body -> CompletableFuture.completedFuture(Json.bytes(clusterView.toJson())));
    route(
        routes,
        REGISTER_JOB,
        "Register a training job on a READY dataset; body: job spec",
        Role.READER,
        body -> registerJob(reading(() -> JobRequest.parse(body))));
    route(
        routes,
        JOB_STATUS,
        "A job's settings and counters; body: {\"job\": ...}",
        Role.READER,
        this::jobStatus);
    route(
        routes,
        LIST_JOBS,
        "Every registered training job's status, by id",
        Role.READER,
        body -> listJobs());
    route(routes, DROP_JOB, "Forget a job; body: {\"job\": ...}", Role.READER, this::dropJob);
    route(
        routes,
        LEASE,
        "Dynamic mode: lease the next batch; body: {job, epoch, worker}",
        Role.READER,
        this::lease);
    route(
        routes,
        ACK,
        "Dynamic mode: acknowledge a lease; body: {job, epoch, lease}",
        Role.READER,
        this::ack);
    return java.util.Collections.unmodifiableMap(routes);
  }

  private static void route(
      Map<String, ActionRoute> routes,
      String name,
      String description,
      Role role,
      ActionHandler handler) {
    routes.put(name, new ActionRoute(new ActionType(name, description), role, handler));
  }

  @Override
  public void listActions(CallContext context, StreamListener<ActionType> listener) {
    try {
      Permissions.check(context, Role.READER, "Listing actions");
    } catch (RuntimeException e) {
      listener.onError(e);
      return;
    }
    actions.values().forEach(route -> listener.onNext(route.type()));
    listener.onCompleted();
  }

  @Override
  public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
    io.micrometer.core.instrument.Timer.Sample timing = calls.start();
    CompletionStage<byte[]> answer;
    try {
      ActionRoute route = actions.get(action.getType());
      if (route == null) {
        Permissions.check(context, Role.READER, "An action");
        throw new InvalidRequestException(
            "Unknown action '"
                + io.floe.util.Excerpt.of(action.getType())
                + "'; known: "
                + String.join(", ", actions.keySet()));
      }
      Permissions.check(context, route.role(), "Action '" + action.getType() + "'");
      answer = route.handler().handle(action.getBody());
    } catch (RuntimeException e) {
      calls.acted(timing, action.getType(), false);
      listener.onError(failure(e));
      return;
    }
    answer.whenComplete(
        (body, error) -> {
          calls.acted(timing, action.getType(), error == null);
          if (error != null) {
            listener.onError(failure(error));
          } else {
            listener.onNext(new Result(body));
            listener.onCompleted();
          }
        });
  }

  private CompletionStage<byte[]> load(byte[] body) {
    LoadRequest load = reading(() -> LoadRequest.parse(body));
    if (load.latest()) {
      // Refresh a dataset loaded the same way, or load it when there is none.
      return datasets
          .refresh(load.spec().name(), load.spec(), load.untilReady())
          .thenCompose(
              reply ->
                  reply.status().state() == DatasetState.ABSENT
                      ? datasets.load(load.spec(), load.untilReady()).thenApply(this::loaded)
                      : CompletableFuture.completedFuture(refreshed(reply, load.untilReady())));
    }
    return datasets.load(load.spec(), load.untilReady()).thenApply(this::loaded);
  }

  private CompletionStage<byte[]> refresh(byte[] body) {
    RefreshRequest refresh = reading(() -> RefreshRequest.parse(body));
    return datasets
        .refresh(refresh.name(), null, refresh.untilDone())
        .thenApply(reply -> refreshed(reply, refresh.untilDone()));
  }

  private CompletionStage<byte[]> status(byte[] body) {
    return datasets
        .status(reading(() -> NameRequest.parse(body, STATUS)).name())
        .thenApply(
            answer -> {
              ObjectNode node = StatusJson.of(answer.value());
              if (answer.stale()) {
                node.put("stale", true);
              }
              return Json.bytes(node);
            });
  }

  private CompletionStage<byte[]> drop(byte[] body) {
    String name = reading(() -> NameRequest.parse(body, DROP)).name();
    return datasets
        .drop(name)
        .thenApply(
            status -> {
              if (status.state() == DatasetState.ABSENT) {
                throw FlightErrors.error(
                    ErrorCode.DATASET_NOT_FOUND, "No dataset '" + name + "' to drop");
              }
              ObjectNode node = StatusJson.of(status);
              node.put("dropped", true);
              return Json.bytes(node);
            });
  }

  private CompletionStage<byte[]> list() {
    return datasets
        .list()
        .thenApply(
            all -> {
              ArrayNode array = Json.object().arrayNode();
              all.forEach(status -> array.add(StatusJson.of(status)));
              return Json.bytes(array);
            });
  }

  private CompletionStage<byte[]> listJobs() {
    return jobs.list()
        .thenApply(
            all -> {
              ArrayNode array = Json.object().arrayNode();
              all.forEach(status -> array.add(JobStatusJson.of(status)));
              return Json.bytes(array);
            });
  }

  private CompletionStage<byte[]> jobStatus(byte[] body) {
    JobRequests.JobStatusRequest asked = reading(() -> JobRequests.JobStatusRequest.parse(body));
    return jobs.status(asked.job(), asked.epoch())
        .thenApply(status -> Json.bytes(JobStatusJson.of(status)));
  }

  private CompletionStage<byte[]> dropJob(byte[] body) {
    return jobs.drop(reading(() -> JobRequests.JobName.parse(body, DROP_JOB)).job())
        .thenApply(
            status -> {
              ObjectNode node = JobStatusJson.of(status);
              node.put("dropped", true);
              return Json.bytes(node);
            });
  }

  private CompletionStage<byte[]> lease(byte[] body) {
    JobRequests.LeaseRequest lease = reading(() -> JobRequests.LeaseRequest.parse(body));
    return jobs.lease(lease.job(), lease.epoch(), lease.worker())
        .thenApply(reply -> Json.bytes(leaseJson(lease.epoch(), reply)));
  }

  private CompletionStage<byte[]> ack(byte[] body) {
    JobRequests.AckRequest ack = reading(() -> JobRequests.AckRequest.parse(body));
    return jobs.ack(ack.job(), ack.epoch(), ack.lease(), ack.worker())
        .thenApply(
            outcome -> {
              ObjectNode node = Json.object();
              node.put("status", outcome.wireName());
              return Json.bytes(node);
            });
  }

  private byte[] loaded(DatasetEntity.LoadReply reply) {
    if (reply instanceof DatasetEntity.LoadReply.Refused refused) {
      throw FlightErrors.of(refused.failure());
    }
    return Json.bytes(StatusJson.of(reply.status()));
  }

  /**
   * The answer to a refresh: the status, or the error of the dataset (missing, failed, loading) or,
   * for a caller that waited, of the refresh itself.
   */
  private byte[] refreshed(DatasetEntity.LoadReply reply, boolean waited) {
    if (reply instanceof DatasetEntity.LoadReply.Refused refused) {
      throw FlightErrors.of(refused.failure());
    }
    DatasetStatus status = reply.status();
    if (status.state() != DatasetState.READY && status.state() != DatasetState.DEGRADED) {
      throw notReady(status);
    }
    RefreshReport report = status.refresh();
    if (waited && report != null && RefreshReport.FAILED.equals(report.state())) {
      throw FlightErrors.of(
          new io.floe.dataset.Failure(
              report.failure().kind(),
              String.format(
                  "Refresh of dataset '%s' failed (it still serves snapshot %d): %s",
                  status.name(), report.fromSnapshot(), report.failure().message())));
    }
    return Json.bytes(StatusJson.of(status));
  }

  /** Registers a job against the dataset's current layout, after checking it can be served. */
  private CompletionStage<byte[]> registerJob(JobSpec spec) {
    return datasets
        .layout(spec.dataset())
        .thenCompose(
            answer -> {
              DatasetLayout layout = answer.value().layout();
              if (layout == null) {
                throw notReady(answer.value().status());
              }
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
              String fingerprint = layout.fingerprint();
              orders.remember(fingerprint, layout);
              return jobs.register(
                  spec, new PinnedLayout(layout.snapshotId(), fingerprint, layout.rows()));
            })
        .thenApply(status -> Json.bytes(JobStatusJson.of(status)));
  }

  private static ObjectNode leaseJson(long epoch, JobEntity.LeaseReply reply) {
    ObjectNode node = Json.object();
    if (reply instanceof JobEntity.LeaseReply.Leased leased) {
      node.put("status", "leased");
      node.put("lease", leased.lease());
      node.put("epoch", epoch);
      node.put("batch", leased.batch());
      node.put("rows", leased.rows());
    } else if (reply instanceof JobEntity.LeaseReply.Wait wait) {
      node.put("status", "wait");
      node.put("retry_ms", wait.retryMillis());
    } else {
      node.put("status", "done");
    }
    return node;
  }

  @Override
  public void listFlights(
      CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    try {
      Permissions.check(context, Role.READER, "Listing flights");
      for (DatasetStatus status : await(datasets.list())) {
        if (status.state() == DatasetState.READY) {
          ReadRequest whole = ReadRequest.whole(status.name());
          try {
            listener.onNext(info(whole, FlightDescriptor.command(whole.toJson())));
          } catch (RuntimeException e) {
            LOG.debug("Dataset {} left the listing while listing: {}", status.name(), e.toString());
          }
        }
      }
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(failure(e));
    }
  }

  @Override
  public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
    io.micrometer.core.instrument.Timer.Sample timing = calls.start();
    String kind = "shard";
    try {
      Permissions.check(context, Role.READER, "Planning a read");
      FlightInfo info;
      if (!descriptor.isCommand()) {
        info = info(reading(() -> wholeDataset(descriptor.getPath())), descriptor);
      } else {
        // Parsed once; its kind says which request it is.
        ObjectNode command =
            reading(() -> Json.parseObject(descriptor.getCommand(), "flight descriptor command"));
        if (reading(() -> JobReadRequest.isJobCommand(command))) {
          kind = "job";
          info = jobInfo(reading(() -> JobReadRequest.parse(command)), descriptor);
        } else {
          info = info(reading(() -> ReadRequest.parse(command)), descriptor);
        }
      }
      calls.planned(timing, kind, true);
      return info;
    } catch (RuntimeException e) {
      calls.planned(timing, kind, false);
      throw failure(e);
    }
  }

  private static ReadRequest wholeDataset(List<String> path) {
    if (path.size() != 1) {
      throw new IllegalArgumentException(
          "Invalid path descriptor " + path + ": expected one element, the dataset name");
    }
    return ReadRequest.whole(path.get(0));
  }

  private FlightInfo info(ReadRequest request, FlightDescriptor descriptor) {
    DatasetEntity.LayoutReply reply = await(datasets.layout(request.dataset())).value();
    if (reply.layout() == null) {
      throw notReady(reply.status());
    }
    return planner.plan(reply.layout(), request, descriptor);
  }

  private FlightInfo jobInfo(JobReadRequest request, FlightDescriptor descriptor) {
    // The epoch's layout: the one it began on, or for a new epoch the dataset's newest. Planning
    // needs where slices are now, so the layout comes from the dataset, not the cache.
    JobStatus job = await(jobs.status(request.job(), request.epoch()));
    String dataset = job.spec().dataset();
    DatasetEntity.LayoutReply serving = await(datasets.layout(dataset)).value();
    DatasetLayout layout =
        serving.layout() != null
                && serving.layout().fingerprint().equals(job.layout().fingerprint())
            ? serving.layout()
            : heldLayout(dataset, job.layout().fingerprint(), job.spec().job(), job.epoch());
    return jobPlanner.plan(job, layout, request, descriptor);
  }

  /** A ticket's layout: this node's cached copy (holders do not matter here), or the dataset's. */
  private DatasetLayout ticketLayout(JobTicket ticket) {
    DatasetLayout layout = orders.layout(ticket.layout());
    // A layout cached before the dataset was loaded again the same way has the same order but
    // other slice ids.
    if (layout != null && layout.indexOf(ticket.sliceId()) >= 0) {
      return layout;
    }
    return heldLayout(ticket.dataset(), ticket.layout(), ticket.job(), ticket.epoch());
  }

  /**
   * The layout with this fingerprint: the one the dataset serves or one it keeps for the jobs that
   * read it.
   */
  private DatasetLayout heldLayout(String dataset, String fingerprint, String job, long epoch) {
    DatasetEntity.LayoutReply reply = await(datasets.layout(dataset, fingerprint));
    if (reply.layout() != null) {
      orders.remember(fingerprint, reply.layout());
      return reply.layout();
    }
    if (reply.status().state() != DatasetState.READY
        && reply.status().state() != DatasetState.DEGRADED) {
      throw notReady(reply.status());
    }
    throw FlightErrors.error(
        ErrorCode.LAYOUT_CHANGED,
        String.format(
            "Dataset '%s' changed: it no longer holds layout %s, which job '%s' read epoch %d"
                + " from (it serves snapshot %s now); register the job again or read a later"
                + " epoch",
            dataset, fingerprint, job, epoch, reply.status().snapshotId()));
  }

  private RuntimeException notReady(DatasetStatus status) {
    return FlightErrors.notReady(status, quorum.shortfall());
  }

  /**
   * Any failure as the Flight error the client sees. A cluster that did not answer in time may be
   * one whose sharding cannot place the entity asked: say so when that is possible.
   */
  private RuntimeException failure(Throwable error) {
    RuntimeException wrapped = FlightErrors.wrap(error);
    if (!(wrapped instanceof FlightRuntimeException flight)
        || flight.status().code() != FlightStatusCode.TIMED_OUT) {
      return wrapped;
    }
    return quorum
        .shortfall()
        .<RuntimeException>map(
            why ->
                FlightErrors.error(
                    ErrorCode.of(flight).orElse(ErrorCode.CLUSTER_TIMEOUT),
                    flight.status().description() + "; " + why,
                    flight.getCause()))
        .orElse(wrapped);
  }

  /**
   * Opens a DoGet answer (see {@link FloeFlightServer}): verifies the ticket and takes a lease on
   * its slice, which the answer holds until it ends.
   */
  @Override
  public BatchSource open(Ticket ticket) {
    try {
      SignedTicket signed = settings.tickets().verify(ticket);
      LoadedSlice.Lease lease =
          slices.acquire(signed.sliceId()).orElseThrow(() -> notHeld(signed.sliceId()));
      try {
        if (signed instanceof JobTicket jobTicket) {
          return openJob(lease, jobTicket);
        }
        return SliceBatches.open(lease, (FloeTicket) signed);
      } catch (RuntimeException e) {
        lease.close();
        throw e;
      }
    } catch (RuntimeException e) {
      LOG.debug("DoGet refused: {}", e.toString());
      throw failure(e);
    }
  }

  private BatchSource openJob(LoadedSlice.Lease lease, JobTicket ticket) {
    LoadedSlice slice = lease.slice();
    DatasetLayout layout = ticketLayout(ticket);
    int sliceIndex = layout.indexOf(ticket.sliceId());
    if (sliceIndex < 0) {
      throw notHeld(ticket.sliceId());
    }
    EpochShape shape = ticket.shape(layout.rows());
    if (ticket.batchTo() > shape.batches()) {
      // A ticket this cluster signed for another epoch shape than the layout's: the node's fault.
      throw FlightErrors.error(
          ErrorCode.INTERNAL,
          String.format(
              "Ticket batches up to %d exceed the epoch's %d", ticket.batchTo(), shape.batches()));
    }
    RankShare share =
        new RankShare(
            shape,
            orders.order(ticket.layout(), layout, ticket.order(), ticket.epoch()),
            ticket.worldSize(),
            ticket.rank());
    Schema projected = JobSchemas.project(slice.schema(), ticket.columns(), ticket.dataset());
    return new JobBatches(
        lease, sliceIndex, layout.slices().size(), ticket, share, projected, orders);
  }

  private static RuntimeException notHeld(String sliceId) {
    return FlightErrors.error(
        ErrorCode.SLICE_NOT_HELD,
        "Slice '" + sliceId + "' is not held by this node (dropped or moved); plan the read again");
  }

  private <T> T await(CompletionStage<T> stage) {
    try {
      return stage
          .toCompletableFuture()
          .get(settings.askTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw FlightErrors.error(ErrorCode.CANCELLED, "Interrupted");
    } catch (Exception e) {
      throw FlightErrors.wrap(e);
    }
  }
}
