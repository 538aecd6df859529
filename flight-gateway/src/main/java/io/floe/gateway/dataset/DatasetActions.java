package io.floe.gateway.dataset;

import static io.floe.protocol.InvalidRequestException.reading;

import io.floe.dataset.DatasetEntity;
import io.floe.dataset.DatasetState;
import io.floe.dataset.DatasetStatus;
import io.floe.dataset.Failure;
import io.floe.dataset.RefreshReport;
import io.floe.gateway.BatchSource;
import io.floe.gateway.ClusterAnswers;
import io.floe.gateway.FlightErrors;
import io.floe.protocol.Actions;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.LoadRequest;
import io.floe.protocol.NameRequest;
import io.floe.protocol.ReadRequest;
import io.floe.protocol.RefreshRequest;
import io.floe.store.LoadedSlice;
import io.floe.ticket.FloeTicket;
import io.floe.ticket.TicketSigner;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;

/**
 * The dataset side of the gateway, one method per request: the dataset actions (load, refresh,
 * status, drop, list), planning a read of a dataset's rows, and opening the stream of one of its
 * tickets. Answers are the actions' JSON bodies.
 */
public final class DatasetActions {
  private final DatasetQueries datasets;
  private final ClusterAnswers answers;
  private final ReadPlanner planner;

  public DatasetActions(DatasetQueries datasets, TicketSigner tickets, ClusterAnswers answers) {
    this.datasets = datasets;
    this.answers = answers;
    this.planner = new ReadPlanner(tickets);
  }

  public CompletionStage<byte[]> load(byte[] body) {
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

  public CompletionStage<byte[]> refresh(byte[] body) {
    RefreshRequest refresh = reading(() -> RefreshRequest.parse(body));
    return datasets
        .refresh(refresh.name(), null, refresh.untilDone())
        .thenApply(reply -> refreshed(reply, refresh.untilDone()));
  }

  public CompletionStage<byte[]> status(byte[] body) {
    return datasets
        .status(reading(() -> NameRequest.parse(body, Actions.STATUS)).name())
        .thenApply(
            answer -> {
              DatasetStatusReply reply = StatusReplies.of(answer.value());
              return (answer.stale() ? reply.asStale() : reply).encode();
            });
  }

  public CompletionStage<byte[]> drop(byte[] body) {
    String name = reading(() -> NameRequest.parse(body, Actions.DROP)).name();
    return datasets
        .drop(name)
        .thenApply(
            status -> {
              if (status.state() == DatasetState.ABSENT) {
                throw FlightErrors.error(
                    ErrorCode.DATASET_NOT_FOUND, "No dataset '" + name + "' to drop");
              }
              return StatusReplies.of(status).asDropped().encode();
            });
  }

  public CompletionStage<byte[]> list() {
    return datasets
        .list()
        .thenApply(
            all -> DatasetStatusReply.encodeList(all.stream().map(StatusReplies::of).toList()));
  }

  /** The names of the datasets that are READY now, for {@code ListFlights}. */
  public List<String> ready() {
    return answers.await(datasets.list()).stream()
        .filter(status -> status.state() == DatasetState.READY)
        .map(DatasetStatus::name)
        .toList();
  }

  /** Plans a read of a dataset's rows: one endpoint per slice part, at the node holding it. */
  public FlightInfo plan(ReadRequest request, FlightDescriptor descriptor) {
    DatasetEntity.LayoutReply reply = answers.await(datasets.layout(request.dataset())).value();
    if (!(reply instanceof DatasetEntity.LayoutReply.Found found)) {
      throw answers.notReady(reply.status());
    }
    return planner.plan(found.layout(), request, descriptor);
  }

  /** The stream of a dataset ticket's rows from the slice {@code lease} holds. */
  public BatchSource open(LoadedSlice.Lease lease, FloeTicket ticket) {
    return SliceBatches.open(lease, ticket);
  }

  private byte[] loaded(DatasetEntity.LoadReply reply) {
    if (reply instanceof DatasetEntity.LoadReply.Refused refused) {
      throw FlightErrors.of(refused.failure());
    }
    return StatusReplies.of(reply.status()).encode();
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
      throw answers.notReady(status);
    }
    RefreshReport report = status.refresh();
    if (waited && report != null && RefreshReport.FAILED.equals(report.state())) {
      throw FlightErrors.of(
          new Failure(
              report.failure().kind(),
              String.format(
                  "Refresh of dataset '%s' failed (it still serves snapshot %d): %s",
                  status.name(), report.fromSnapshot(), report.failure().message())));
    }
    return StatusReplies.of(status).encode();
  }
}
