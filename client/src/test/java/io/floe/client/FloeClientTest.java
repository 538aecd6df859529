package io.floe.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.protocol.Actions;
import io.floe.protocol.ClusterViewReply;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.JobRequest;
import io.floe.protocol.JobStatusReply;
import io.floe.protocol.LoadRequest;
import io.floe.protocol.NameRequest;
import io.floe.spec.DatasetSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallInfo;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.FlightServerMiddleware;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.RequestContext;
import org.apache.arrow.flight.Result;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java client against a Flight server on 127.0.0.1 that answers as a node does: each call goes
 * out as the action and body the node's codecs read, each answer the node's codecs write comes back
 * as its typed reply, a refusal as the node's status, and a token on every call.
 */
class FloeClientTest {
  private static final String TOKEN = "a-reader-token";

  private static final String STATUS =
      """
      {"name": "events", "state": "READY", "slices_loaded": 2, "slices_total": 2, "rows": 40000,
       "bytes": 327680, "snapshot_id": 7, "seconds_to_ready": 1.5,
       "source": {"location": "file:/tables/events"}, "decoders": {"native": 2}}
      """;

  private static final String JOB =
      """
      {"job": "train", "dataset": "events", "mode": "dynamic", "batch_rows": 1000, "seed": 3,
       "shuffle": true, "block_rows": 4096, "window_blocks": 16, "tail": "drop", "columns": [],
       "lease_timeout_ms": 60000, "pin_layout": false, "epoch": 0, "rows": 40000,
       "batches_per_epoch": 40, "layout": "078c664cf55aaae8", "snapshot_id": 7,
       "layouts": [{"from_epoch": 0, "layout": "078c664cf55aaae8", "rows": 40000,
                    "snapshot_id": 7}],
       "counters": {"leases_active": 0, "rows_acknowledged": 0, "rows_leased": 0,
                    "rows_reissued": 0},
       "epochs": []}
      """;

  private final List<Action> received = new CopyOnWriteArrayList<>();
  private BufferAllocator allocator;
  private FlightServer server;

  /** Answers as a node would, with the bytes its codecs write. */
  private final class NodeLikeProducer extends NoOpFlightProducer {
    @Override
    public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
      received.add(action);
      byte[] body = action.getBody();
      switch (action.getType()) {
        case Actions.LOAD -> {
          LoadRequest.parse(body); // the node's own reading of what the client sent
          answer(listener, DatasetStatusReply.parse(bytes(STATUS)).encode());
        }
        case Actions.STATUS -> {
          if (NameRequest.parse(body, Actions.STATUS).name().equals("missing")) {
            listener.onError(
                CallStatus.NOT_FOUND.withDescription("No dataset 'missing'").toRuntimeException());
            return;
          }
          answer(listener, DatasetStatusReply.parse(bytes(STATUS)).encode());
        }
        case Actions.LIST ->
            answer(
                listener,
                DatasetStatusReply.encodeList(List.of(DatasetStatusReply.parse(bytes(STATUS)))));
        case Actions.REGISTER_JOB -> {
          JobRequest.parse(body);
          answer(listener, JobStatusReply.parse(bytes(JOB)).encode());
        }
        case Actions.CLUSTER ->
            answer(
                listener,
                new ClusterViewReply(
                        "pekko://floe@127.0.0.1:25520",
                        List.of(
                            new ClusterViewReply.Member(
                                "pekko://floe@127.0.0.1:25520", "Up", List.of("data"))),
                        List.of(),
                        1,
                        1,
                        null,
                        new ClusterViewReply.Memory(1024, 1L << 30, 2))
                    .encode());
        default ->
            listener.onError(
                CallStatus.UNIMPLEMENTED.withDescription(action.getType()).toRuntimeException());
      }
    }

    private void answer(StreamListener<Result> listener, byte[] reply) {
      listener.onNext(new Result(reply));
      listener.onCompleted();
    }
  }

  /** Lets in only calls that carry the reader's bearer token, as a node with auth on does. */
  private static final class TokenCheck implements FlightServerMiddleware {
    @Override
    public void onBeforeSendingHeaders(CallHeaders outgoingHeaders) {}

    @Override
    public void onCallCompleted(CallStatus status) {}

    @Override
    public void onCallErrored(Throwable err) {}
  }

  @BeforeEach
  void startServer() throws Exception {
    allocator = new RootAllocator();
    server =
        FlightServer.builder(
                allocator, Location.forGrpcInsecure("127.0.0.1", 0), new NodeLikeProducer())
            .middleware(
                FlightServerMiddleware.Key.of("token"),
                (CallInfo info, CallHeaders headers, RequestContext context) -> {
                  if (!("Bearer " + TOKEN).equals(headers.get("authorization"))) {
                    throw CallStatus.UNAUTHENTICATED
                        .withDescription("No valid bearer token")
                        .toRuntimeException();
                  }
                  return new TokenCheck();
                })
            .build()
            .start();
  }

  @AfterEach
  void stopServer() throws Exception {
    server.close();
    assertThat(allocator.getAllocatedMemory()).isZero();
    allocator.close();
  }

  private FloeClient client() {
    return FloeClient.connect(allocator, server.getLocation(), TOKEN);
  }

  @Test
  void eachCallIsTheActionAndBodyTheNodeReadsAndItsAnswerComesBackTyped() throws Exception {
    DatasetSpec spec = DatasetSpec.of("events", "file:/tables/events").withColumns(List.of("id"));
    try (FloeClient client = client()) {
      DatasetStatusReply loaded = client.load(new LoadRequest(spec, true));
      assertThat(LoadRequest.parse(received.get(0).getBody()))
          .isEqualTo(new LoadRequest(spec, true));
      assertThat(loaded).isEqualTo(DatasetStatusReply.parse(bytes(STATUS)));
      assertThat(loaded.rows()).isEqualTo(40_000);

      assertThat(client.status("events").state()).isEqualTo(DatasetStatusReply.State.READY);
      assertThat(NameRequest.parse(received.get(1).getBody(), Actions.STATUS).name())
          .isEqualTo("events");
      assertThat(client.list()).extracting(DatasetStatusReply::name).containsExactly("events");

      JobStatusReply job =
          client.registerJob(
              JobOptions.builder("train", "events", 1000).seed(3).mode(JobMode.DYNAMIC).build());
      JobSpec sent = JobRequest.parse(received.get(3).getBody());
      assertThat(sent.job()).isEqualTo("train");
      assertThat(sent.seed()).isEqualTo(3);
      assertThat(sent.mode()).isEqualTo(JobMode.DYNAMIC);
      assertThat(job).isEqualTo(JobStatusReply.parse(bytes(JOB)));

      ClusterViewReply view = client.cluster();
      assertThat(view.membersUp()).isEqualTo(1);
      assertThat(view.protocolVersion()).isEqualTo(ClusterViewReply.PROTOCOL_VERSION);
    }
    assertThat(received)
        .extracting(Action::getType)
        .containsExactly(
            Actions.LOAD, Actions.STATUS, Actions.LIST, Actions.REGISTER_JOB, Actions.CLUSTER);
  }

  @Test
  void aRefusalComesBackAsTheNodesStatusAndDescription() throws Exception {
    try (FloeClient client = client()) {
      assertThatThrownBy(() -> client.status("missing"))
          .isInstanceOfSatisfying(
              FlightRuntimeException.class,
              e -> {
                assertThat(e.status().code()).isEqualTo(FlightStatusCode.NOT_FOUND);
                assertThat(e.status().description()).isEqualTo("No dataset 'missing'");
              });
    }
  }

  @Test
  void everyCallCarriesTheToken() throws Exception {
    try (FloeClient anonymous = FloeClient.connect(allocator, server.getLocation())) {
      assertThatThrownBy(anonymous::list)
          .isInstanceOfSatisfying(
              FlightRuntimeException.class,
              e -> assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHENTICATED));
    }
    try (FloeClient client = client()) {
      assertThat(client.list()).hasSize(1);
    }
  }

  private static byte[] bytes(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }
}
