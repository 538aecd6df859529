package io.floe.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.dataset.DatasetEntity;
import io.floe.dataset.DatasetState;
import io.floe.dataset.DatasetStatus;
import io.floe.protocol.Json;
import io.floe.protocol.LoadRequest;
import io.floe.protocol.NameRequest;
import io.floe.protocol.ReadRequest;
import io.floe.protocol.StatusJson;
import io.floe.slice.LoadedSlice;
import io.floe.slice.SliceStore;
import io.floe.ticket.FloeTicket;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every reader request enters a node. Actions and planning ask the dataset entities (wherever
 * they live); {@code DoGet} streams straight from this node's {@link SliceStore}. Every failure
 * leaves as a Flight status naming what was wrong; nothing a request does can take the node down.
 */
public final class FloeProducer extends NoOpFlightProducer {
  public static final String LOAD = "load";
  public static final String STATUS = "status";
  public static final String DROP = "drop";
  public static final String LIST = "list";
  public static final String CLUSTER = "cluster";

  private static final Logger LOG = LoggerFactory.getLogger(FloeProducer.class);
  private static final List<ActionType> ACTIONS =
      List.of(
          new ActionType(LOAD, "Load a dataset from an Iceberg table; body: dataset spec JSON"),
          new ActionType(STATUS, "A dataset's state and size; body: {\"name\": ...}"),
          new ActionType(DROP, "Drop a dataset and free its memory; body: {\"name\": ...}"),
          new ActionType(LIST, "Every loaded dataset's status"),
          new ActionType(CLUSTER, "The cluster's members as this node sees them"));

  private final DatasetQueries datasets;
  private final SliceStore slices;
  private final GatewaySettings settings;
  private final ReadPlanner planner;
  private final ClusterView clusterView;
  private final AtomicLong streams = new AtomicLong();

  public FloeProducer(DatasetQueries datasets, SliceStore slices, GatewaySettings settings) {
    this.datasets = datasets;
    this.slices = slices;
    this.settings = settings;
    this.planner = new ReadPlanner(settings.advertised(), settings.tickets());
    this.clusterView = new ClusterView(datasets.system());
  }

  @Override
  public void listActions(CallContext context, StreamListener<ActionType> listener) {
    ACTIONS.forEach(listener::onNext);
    listener.onCompleted();
  }

  @Override
  public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
    CompletionStage<byte[]> answer;
    try {
      answer = act(action);
    } catch (RuntimeException e) {
      listener.onError(FlightErrors.wrap(e));
      return;
    }
    answer.whenComplete(
        (body, error) -> {
          if (error != null) {
            listener.onError(FlightErrors.wrap(error));
          } else {
            listener.onNext(new Result(body));
            listener.onCompleted();
          }
        });
  }

  private CompletionStage<byte[]> act(Action action) {
    switch (action.getType()) {
      case LOAD:
        LoadRequest load = LoadRequest.parse(action.getBody());
        return datasets
            .load(load.spec(), load.untilReady())
            .thenApply(
                reply -> {
                  if (reply.failure() != null) {
                    throw FlightErrors.of(reply.failure());
                  }
                  return Json.bytes(StatusJson.of(reply.status()));
                });
      case STATUS:
        return datasets
            .status(NameRequest.parse(action.getBody(), STATUS).name())
            .thenApply(
                answer -> {
                  ObjectNode node = StatusJson.of(answer.value());
                  if (answer.stale()) {
                    node.put("stale", true);
                  }
                  return Json.bytes(node);
                });
      case DROP:
        String name = NameRequest.parse(action.getBody(), DROP).name();
        return datasets
            .drop(name)
            .thenApply(
                status -> {
                  if (status.state() == DatasetState.ABSENT) {
                    throw CallStatus.NOT_FOUND
                        .withDescription("No dataset '" + name + "' to drop")
                        .toRuntimeException();
                  }
                  ObjectNode node = StatusJson.of(status);
                  node.put("dropped", true);
                  return Json.bytes(node);
                });
      case LIST:
        return datasets
            .list()
            .thenApply(
                all -> {
                  ArrayNode array = Json.object().arrayNode();
                  all.forEach(status -> array.add(StatusJson.of(status)));
                  return Json.bytes(array);
                });
      case CLUSTER:
        return java.util.concurrent.CompletableFuture.completedFuture(
            Json.bytes(clusterView.toJson()));
      default:
        throw CallStatus.INVALID_ARGUMENT
            .withDescription(
                "Unknown action '"
                    + action.getType()
                    + "'; known: "
                    + String.join(", ", LOAD, STATUS, DROP, LIST, CLUSTER))
            .toRuntimeException();
    }
  }

  @Override
  public void listFlights(
      CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    try {
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
      listener.onError(FlightErrors.wrap(e));
    }
  }

  @Override
  public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
    try {
      return info(request(descriptor), descriptor);
    } catch (RuntimeException e) {
      throw FlightErrors.wrap(e);
    }
  }

  private static ReadRequest request(FlightDescriptor descriptor) {
    if (descriptor.isCommand()) {
      return ReadRequest.parse(descriptor.getCommand());
    }
    List<String> path = descriptor.getPath();
    if (path.size() != 1) {
      throw new IllegalArgumentException(
          "Invalid path descriptor " + path + ": expected one element, the dataset name");
    }
    return ReadRequest.whole(path.get(0));
  }

  private FlightInfo info(ReadRequest request, FlightDescriptor descriptor) {
    DatasetEntity.LayoutReply reply = await(datasets.layout(request.dataset())).value();
    if (reply.layout() == null) {
      throw FlightErrors.notReady(reply.status());
    }
    return planner.plan(reply.layout(), request, descriptor);
  }

  @Override
  public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
    long id = streams.incrementAndGet();
    try {
      FloeTicket floeTicket = settings.tickets().verify(ticket);
      try (LoadedSlice.Lease lease =
          slices.acquire(floeTicket.sliceId()).orElseThrow(() -> notHeld(floeTicket.sliceId()))) {
        long batches =
            new SliceStreamer(settings.stallTimeout()).stream(lease.slice(), floeTicket, listener);
        LOG.debug("Stream {} of {}: {} batches", id, floeTicket.sliceId(), batches);
      }
    } catch (RuntimeException e) {
      LOG.debug("Stream {} failed: {}", id, e.toString());
      listener.error(FlightErrors.wrap(e));
    }
  }

  private static RuntimeException notHeld(String sliceId) {
    return CallStatus.NOT_FOUND
        .withDescription(
            "Slice '"
                + sliceId
                + "' is not held by this node (dropped or moved); plan the read again")
        .toRuntimeException();
  }

  private <T> T await(CompletionStage<T> stage) {
    try {
      return stage
          .toCompletableFuture()
          .get(settings.askTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw CallStatus.CANCELLED.withDescription("Interrupted").toRuntimeException();
    } catch (Exception e) {
      throw FlightErrors.wrap(e);
    }
  }
}
