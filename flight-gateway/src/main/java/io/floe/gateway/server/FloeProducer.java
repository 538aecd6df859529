package io.floe.gateway.server;

import static io.floe.protocol.InvalidRequestException.reading;

import io.floe.auth.Caller;
import io.floe.auth.Permissions;
import io.floe.auth.Role;
import io.floe.gateway.BatchSource;
import io.floe.gateway.ClusterAnswers;
import io.floe.gateway.FlightErrors;
import io.floe.gateway.GatewaySettings;
import io.floe.gateway.HeldSlices;
import io.floe.gateway.ShardingQuorum;
import io.floe.gateway.dataset.DatasetActions;
import io.floe.gateway.dataset.DatasetQueries;
import io.floe.gateway.job.JobActions;
import io.floe.protocol.Actions;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.InvalidRequestException;
import io.floe.protocol.JobReadRequest;
import io.floe.protocol.ReadCommand;
import io.floe.protocol.ReadRequest;
import io.floe.store.LoadedSlice;
import io.floe.store.SliceStore;
import io.floe.ticket.FloeTicket;
import io.floe.ticket.JobTicket;
import io.floe.ticket.SignedTicket;
import io.floe.util.Excerpt;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every reader request enters a node. It checks the caller's role, times the call and turns
 * every failure into a Flight status naming what was wrong; the work itself is the dataset side's
 * ({@link DatasetActions}) or a job's ({@link JobActions}), one method per action, plan and ticket
 * kind. Actions and planning ask the entities (wherever they live); {@code DoGet} streams straight
 * from this node's {@link SliceStore}. Nothing a request does can take the node down.
 */
public final class FloeProducer extends NoOpFlightProducer implements TicketStreams {
  private static final Logger LOG = LoggerFactory.getLogger(FloeProducer.class);

  /** An action: what it is called and does, the role it needs, and its handler. */
  private record ActionRoute(ActionType type, Role role, ActionHandler handler) {}

  /**
   * Answers one action's body for its caller; a request it cannot read is an {@link
   * InvalidRequestException}.
   */
  @FunctionalInterface
  private interface ActionHandler {
    CompletionStage<byte[]> handle(Caller caller, byte[] body);
  }

  private final SliceStore slices;
  private final GatewaySettings settings;
  private final DatasetActions datasets;
  private final JobActions jobs;
  private final ClusterView clusterView;
  private final ClusterAnswers answers;
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
    this.slices = slices;
    this.settings = settings;
    ShardingQuorum quorum = new ShardingQuorum(datasets.system());
    this.answers = new ClusterAnswers(settings, quorum);
    this.datasets = new DatasetActions(datasets, settings.tickets(), answers);
    this.jobs = new JobActions(datasets.system(), datasets, settings, answers, slices);
    this.clusterView = new ClusterView(datasets.system(), quorum, memory, slices);
    this.actions = routes();
    this.calls = new CallMetrics(meters, actions.keySet());
  }

  /** Every action, in the order listActions gives them. */
  private Map<String, ActionRoute> routes() {
    Map<String, ActionRoute> routes = new LinkedHashMap<>();
    route(
        routes,
        Actions.LOAD,
        "Load a dataset from an Iceberg table; body: dataset spec JSON",
        Role.OPERATOR,
        datasets::load);
    route(
        routes,
        Actions.STATUS,
        "A dataset's state and size; body: {\"name\": ...}",
        Role.READER,
        datasets::status);
    route(
        routes,
        Actions.DROP,
        "Drop a dataset and free its memory; body: {\"name\": ...}",
        Role.OPERATOR,
        datasets::drop);
    route(
        routes,
        Actions.REFRESH,
        "Move a dataset to its table's newest snapshot, loading only what changed;"
            + " body: {\"name\": ..., \"wait\": true}",
        Role.OPERATOR,
        datasets::refresh);
    route(
        routes,
        Actions.LIST,
        "Every loaded dataset's status",
        Role.READER,
        (caller, body) -> datasets.list(caller));
    route(
        routes,
        Actions.CLUSTER,
        "The cluster's members as this node sees them",
        Role.READER,
        (caller, body) -> CompletableFuture.completedFuture(clusterView.reply().encode()));
    route(
        routes,
        Actions.REGISTER_JOB,
        "Register a training job on a READY dataset; body: job spec",
        Role.READER,
        jobs::register);
    route(
        routes,
        Actions.JOB_STATUS,
        "A job's settings and counters; body: {\"job\": ...}",
        Role.READER,
        jobs::status);
    route(
        routes,
        Actions.LIST_JOBS,
        "Every registered training job's status, by id",
        Role.READER,
        (caller, body) -> jobs.list(caller));
    route(routes, Actions.DROP_JOB, "Forget a job; body: {\"job\": ...}", Role.READER, jobs::drop);
    route(
        routes,
        Actions.LEASE,
        "Dynamic mode: lease the next batch; body: {job, epoch, worker}",
        Role.READER,
        // Leases and acknowledgements name batches, not rows: the rows are planned (and scoped).
        (caller, body) -> jobs.lease(body));
    route(
        routes,
        Actions.ACK,
        "Dynamic mode: acknowledge a lease; body: {job, epoch, lease}",
        Role.READER,
        (caller, body) -> jobs.ack(body));
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
                + Excerpt.of(action.getType())
                + "'; known: "
                + String.join(", ", actions.keySet()));
      }
      Caller caller = Permissions.check(context, route.role(), "Action '" + action.getType() + "'");
      answer = route.handler().handle(caller, action.getBody());
    } catch (RuntimeException e) {
      calls.acted(timing, action.getType(), false);
      listener.onError(answers.failure(e));
      return;
    }
    answer.whenComplete(
        (body, error) -> {
          calls.acted(timing, action.getType(), error == null);
          if (error != null) {
            listener.onError(answers.failure(error));
          } else {
            listener.onNext(new Result(body));
            listener.onCompleted();
          }
        });
  }

  @Override
  public void listFlights(
      CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    try {
      Caller caller = Permissions.check(context, Role.READER, "Listing flights");
      for (String name : datasets.ready(caller)) {
        ReadRequest whole = ReadRequest.whole(name);
        try {
          listener.onNext(datasets.plan(caller, whole, FlightDescriptor.command(whole.toJson())));
        } catch (RuntimeException e) {
          LOG.debug("Dataset {} left the listing while listing: {}", name, e.toString());
        }
      }
      listener.onCompleted();
    } catch (RuntimeException e) {
      listener.onError(answers.failure(e));
    }
  }

  @Override
  public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
    io.micrometer.core.instrument.Timer.Sample timing = calls.start();
    String kind = "shard";
    try {
      Caller caller = Permissions.check(context, Role.READER, "Planning a read");
      FlightInfo info;
      if (!descriptor.isCommand()) {
        info = datasets.plan(caller, reading(() -> wholeDataset(descriptor.getPath())), descriptor);
      } else {
        ReadCommand command = reading(() -> ReadCommand.parse(descriptor.getCommand()));
        if (command instanceof JobReadRequest jobRead) {
          kind = "job";
          info = jobs.plan(caller, jobRead, descriptor);
        } else {
          info = datasets.plan(caller, (ReadRequest) command, descriptor);
        }
      }
      calls.planned(timing, kind, true);
      return info;
    } catch (RuntimeException e) {
      calls.planned(timing, kind, false);
      throw answers.failure(e);
    }
  }

  /** Floe takes no data from callers: datasets come from tables, through {@code load}. */
  @Override
  public Runnable acceptPut(
      CallContext context, FlightStream flightStream, StreamListener<PutResult> ackStream) {
    throw unimplemented("DoPut");
  }

  @Override
  public void doExchange(CallContext context, FlightStream reader, ServerStreamListener writer) {
    writer.error(unimplemented("DoExchange"));
  }

  private static RuntimeException unimplemented(String method) {
    return FlightErrors.error(
        ErrorCode.UNIMPLEMENTED,
        method
            + " is not offered: Floe serves datasets it loads from Iceberg tables ('load'), read"
            + " with GetFlightInfo and DoGet");
  }

  private static ReadRequest wholeDataset(List<String> path) {
    if (path.size() != 1) {
      throw new IllegalArgumentException(
          "Invalid path descriptor "
              + Excerpt.of(path)
              + ": expected one element, the dataset name");
    }
    return ReadRequest.whole(path.get(0));
  }

  /**
   * Opens a DoGet answer (see {@link FloeFlightServer}): verifies the ticket, and that {@code
   * caller} is the one it was planned for if it is bound to one, and takes a lease on each slice it
   * reads, which the answer holds until it ends.
   */
  @Override
  public BatchSource open(Caller caller, Ticket ticket) {
    try {
      SignedTicket signed = settings.tickets().verify(ticket, caller.ticketHolder().orElse(null));
      if (signed instanceof JobTicket jobTicket) {
        return jobs.open(jobTicket); // leases the slices it gathers from
      }
      FloeTicket sliceTicket = (FloeTicket) signed;
      LoadedSlice.Lease lease =
          slices
              .acquire(sliceTicket.sliceId())
              .orElseThrow(() -> FlightErrors.sliceNotHeld(sliceTicket.sliceId()));
      try {
        return HeldSlices.watching(datasets.open(lease, sliceTicket), List.of(lease.slice()));
      } catch (RuntimeException e) {
        lease.close();
        throw e;
      }
    } catch (RuntimeException e) {
      LOG.debug("DoGet refused: {}", e.toString());
      throw answers.failure(e);
    }
  }
}
