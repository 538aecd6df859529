package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.protocol.JobStatusReply;
import io.floe.spec.DatasetSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad job requests get the status docs/protocol.md gives them, with a description naming what was
 * wrong, sent raw so that the server (not the Java client's own checks) answers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JobBadInputTest {
  private static final String DATASET = "events";

  private ClientNode serving;
  private FloeClient client;
  private FlightClient raw;

  @BeforeAll
  void start(@TempDir Path dir) {
    serving = ClientNode.servingEvents(dir, DATASET, 1, 1_000, 4, DatasetSpec.BATCH_ROWS_DEFAULT);
    client = serving.client();
    raw = FlightClient.builder(serving.allocator(), serving.location()).build();
    client.registerJob(JobOptions.builder("good", DATASET, 96).seed(1).build());
  }

  @AfterAll
  void stop() throws Exception {
    raw.close();
    serving.close();
  }

  private static void assertStatus(ThrowingCallable call, FlightStatusCode code, String... parts) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).as(e.getMessage()).isEqualTo(code);
              for (String part : parts) {
                assertThat(e.status().description()).as(e.getMessage()).contains(part);
              }
            });
  }

  private void action(String type, String body) {
    raw.doAction(new Action(type, body.getBytes(StandardCharsets.UTF_8))).forEachRemaining(r -> {});
  }

  private void plan(String command) {
    raw.getInfo(FlightDescriptor.command(command.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aWorldSizeThatDoesNotDivideTheBatchIsInvalid() {
    assertStatus(
        () -> plan("{\"job\": \"good\", \"epoch\": 0, \"world_size\": 5, \"rank\": 0}"),
        FlightStatusCode.INVALID_ARGUMENT,
        "world_size");
    assertThatThrownBy(
            () ->
                client.readJob(
                    JobOptions.builder("good", DATASET, 96).seed(1).build(), 0, 5, 0, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("world_size");
  }

  @Test
  void badReadRangesAreInvalid() {
    assertStatus(
        () -> plan("{\"job\": \"good\", \"epoch\": 0, \"world_size\": 2, \"rank\": 2}"),
        FlightStatusCode.INVALID_ARGUMENT,
        "rank");
    assertStatus(
        () ->
            plan(
                "{\"job\": \"good\", \"epoch\": 0, \"world_size\": 1, \"rank\": 0,"
                    + " \"batch_from\": 0, \"batch_to\": 11}"),
        FlightStatusCode.INVALID_ARGUMENT,
        "batch_to");
    assertStatus(
        () ->
            plan(
                "{\"job\": \"good\", \"epoch\": 0, \"world_size\": 1, \"rank\": 0,"
                    + " \"batch_step\": 0}"),
        FlightStatusCode.INVALID_ARGUMENT,
        "batch_step");
  }

  @Test
  void anUnknownJobIsNotFound() {
    try (CapturedLogs logs = CapturedLogs.open()) {
      unknownJobEverywhere();
      // Asking about an id is no news for the operator: a line each would flood the log.
      assertThat(logs.operatorLines())
          .noneSatisfy(line -> assertThat(line).contains("no-such-job"));
    }
  }

  private void unknownJobEverywhere() {
    assertStatus(() -> client.jobStatus("no-such-job"), FlightStatusCode.NOT_FOUND, "no-such-job");
    assertStatus(
        () -> plan("{\"job\": \"no-such-job\", \"epoch\": 0, \"world_size\": 1, \"rank\": 0}"),
        FlightStatusCode.NOT_FOUND,
        "no-such-job");
    assertStatus(
        () -> action("lease", "{\"job\": \"no-such-job\", \"epoch\": 0, \"worker\": \"w\"}"),
        FlightStatusCode.NOT_FOUND,
        "no-such-job");
    assertStatus(() -> client.dropJob("no-such-job"), FlightStatusCode.NOT_FOUND, "no-such-job");
  }

  @Test
  void anUnknownLeaseIsNotFound() {
    client.registerJob(
        JobOptions.builder("leases", DATASET, 100).mode(io.floe.job.JobMode.DYNAMIC).build());
    assertStatus(
        () ->
            action(
                "ack",
                "{\"job\": \"leases\", \"epoch\": 0, \"lease\": \"0:99:7\", \"worker\": \"w\"}"),
        FlightStatusCode.NOT_FOUND,
        "0:99:7");
  }

  @Test
  void registeringAgainIsIdempotentOnlyWithTheSameSettings() {
    JobOptions options = JobOptions.builder("twice", DATASET, 50).seed(9).build();
    JobStatusReply first = client.registerJob(options);
    JobStatusReply again = client.registerJob(options);
    assertThat(again.layout()).isEqualTo(first.layout());
    assertThat(again.batchesPerEpoch()).isEqualTo(1_000 / 50);
    assertStatus(
        () -> client.registerJob(options.toBuilder().seed(10).build()),
        FlightStatusCode.ALREADY_EXISTS,
        "twice");
    assertStatus(
        () -> client.registerJob(JobOptions.builder("twice", DATASET, 40).seed(9).build()),
        FlightStatusCode.ALREADY_EXISTS,
        "twice");
  }

  @Test
  void anUnknownDatasetIsNotFound() {
    assertStatus(
        () -> client.registerJob(JobOptions.builder("orphan", "no-such-dataset", 10).build()),
        FlightStatusCode.NOT_FOUND,
        "no-such-dataset");
  }

  @Test
  void badJobSpecsAreInvalid() {
    assertStatus(
        () ->
            client.registerJob(
                JobOptions.builder("cols", DATASET, 10).columns("id", "nope").build()),
        FlightStatusCode.INVALID_ARGUMENT,
        "nope");
    assertStatus(
        () -> client.registerJob(JobOptions.builder("huge", DATASET, 1_001).build()),
        FlightStatusCode.INVALID_ARGUMENT,
        "batch_rows");
    assertStatus(
        () ->
            action(
                "register_job",
                "{\"job\": \"typo\", \"dataset\": \"events\", \"batch_rows\": 10, \"sead\": 1}"),
        FlightStatusCode.INVALID_ARGUMENT,
        "sead");
    assertStatus(
        () ->
            action(
                "register_job",
                "{\"job\": \"mode\", \"dataset\": \"events\", \"batch_rows\": 10,"
                    + " \"mode\": \"random\"}"),
        FlightStatusCode.INVALID_ARGUMENT,
        "mode");
    assertStatus(
        () -> action("register_job", "{\"job\": \"no batch\", \"dataset\": \"events\"}"),
        FlightStatusCode.INVALID_ARGUMENT);
  }

  @Test
  void aDroppedJobIsGone() {
    JobOptions options = JobOptions.builder("short-lived", DATASET, 10).build();
    client.registerJob(options);
    JobStatusReply dropped = client.dropJob(options.job());
    assertThat(dropped.dropped()).isTrue();
    assertThat(dropped.job()).isEqualTo(options.job());
    assertStatus(() -> client.jobStatus(options.job()), FlightStatusCode.NOT_FOUND, "short-lived");
  }
}
