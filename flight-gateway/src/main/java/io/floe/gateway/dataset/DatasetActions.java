package io.floe.gateway.dataset;

import static io.floe.protocol.InvalidRequestException.reading;

import io.floe.auth.Caller;
import io.floe.auth.Permissions;
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
 *
 * <p>Each request is its caller's: a dataset outside the caller's scope is refused before anything
 * is asked ({@link Permissions#checkReaches}) and left out of listings; a change carries the
 * caller's {@link Caller#requester()}, which the dataset's entity checks against its owner.
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

  public CompletionStage<byte[]> load(Caller caller, byte[] body) {
    LoadRequest load = reading(() -> LoadRequest.parse(body));
    Permissions.checkReaches(caller, load.spec().name());
    if (load.latest()) {
      // Refresh a dataset loaded the same way, or load it when there is none.
      return datasets
          .refresh(load.spec().name(), load.spec(), load.untilReady(), caller.requester())
          .thenCompose(
              reply ->
                  reply.status().state() == DatasetState.ABSENT
                      ? datasets
                          .load(load.spec(), load.untilReady(), caller.requester())
                          .thenApply(this::loaded)
                      : CompletableFuture.completedFuture(refreshed(reply, load.untilReady())));
    }
    return datasets
        .load(load.spec(), load.untilReady(), caller.requester())
        .thenApply(this::loaded);
  }

  public CompletionStage<byte[]> refresh(Caller caller, byte[] body) {
    RefreshRequest refresh = reading(() -> RefreshRequest.parse(body));
    Permissions.checkReaches(caller, refresh.name());
    return datasets
        .refresh(refresh.name(), null, refresh.untilDone(), caller.requester())
        .thenApply(reply -> refreshed(reply, refresh.untilDone()));
  }

  public CompletionStage<byte[]> status(Caller caller, byte[] body) {
    String name = reading(() -> NameRequest.parse(body, Actions.STATUS)).name();
    Permissions.checkReaches(caller, name);
    return datasets
        .status(name)
        .thenApply(
            answer -> {
              DatasetStatusReply reply = StatusReplies.of(answer.value());
              return (answer.stale() ? reply.asStale() : reply).encode();
            });
  }

  public CompletionStage<byte[]> drop(Caller caller, byte[] body) {
    String name = reading(() -> NameRequest.parse(body, Actions.DROP)).name();
    Permissions.checkReaches(caller, name);
    return datasets
        .drop(name, caller.requester())
        .thenApply(
            reply -> {
              if (reply instanceof DatasetEntity.LoadReply.Refused refused) {
                throw FlightErrors.of(refused.failure());
              }
              DatasetStatus status = reply.status();
              if (status.state() == DatasetState.ABSENT) {
                throw FlightErrors.error(
                    ErrorCode.DATASET_NOT_FOUND, "No dataset '" + name + "' to drop");
              }
              return StatusReplies.of(status).asDropped().encode();
            });
  }

  /** Every dataset the caller's scope reaches. */
  public CompletionStage<byte[]> list(Caller caller) {
    return datasets
        .list()
        .thenApply(
            all ->
                DatasetStatusReply.encodeList(
                    all.stream()
                        .filter(status -> caller.scope().allows(status.name()))
                        .map(StatusReplies::of)
                        .toList()));
  }

  /** The names of the datasets the caller reaches that are READY now, for {@code ListFlights}. */
  public List<String> ready(Caller caller) {
    return answers.await(datasets.list()).stream()
        .filter(status -> status.state() == DatasetState.READY)
        .filter(status -> caller.scope().allows(status.name()))
        .map(DatasetStatus::name)
        .toList();
  }

  /** Plans a read of a dataset's rows: one endpoint per slice part, at the node holding it. */
  public FlightInfo plan(Caller caller, ReadRequest request, FlightDescriptor descriptor) {
    Permissions.checkReaches(caller, request.dataset());
    DatasetEntity.LayoutReply reply = answers.await(datasets.layout(request.dataset())).value();
    if (!(reply instanceof DatasetEntity.LayoutReply.Found found)) {
      throw answers.notReady(reply.status());
    }
    return planner.plan(found.layout(), request, descriptor, caller.ticketHolder().orElse(null));
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
