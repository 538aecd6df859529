package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.TailPolicy;
import io.floe.spec.DatasetSpec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every request the Java client writes is read back by the server's codec as the same value, and
 * what a codec refuses it refuses naming the field.
 */
class RequestCodecsTest {
  private static byte[] json(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aLoadRoundTripsWithEverySetting() {
    DatasetSpec spec =
        DatasetSpec.of("events", "cat.db.events")
            .withColumns(List.of("id", "ts"))
            .withFilter("id >= 10")
            .withBatchRows(4_096);
    for (LoadRequest load :
        List.of(
            new LoadRequest(spec, true),
            new LoadRequest(spec, false, true),
            new LoadRequest(spec.withSnapshotId(42L), false))) {
      assertThat(LoadRequest.parse(load.toJson())).isEqualTo(load);
    }
  }

  @Test
  void aLoadNamesTheFieldItRefuses() {
    assertThatThrownBy(() -> LoadRequest.parse(json("{\"name\": \"e\", \"tabel\": \"t\"}")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tabel");
    assertThatThrownBy(() -> LoadRequest.parse(json("{\"name\": \"e\"}")))
        .hasMessageContaining("table");
    assertThatThrownBy(
            () ->
                LoadRequest.parse(
                    json("{\"name\": \"e\", \"table\": \"t\", \"snapshot\": \"oldest\"}")))
        .hasMessageContaining("snapshot");
  }

  @Test
  void aClientsRegisterJobBodySendsOnlyWhatItSetsAndReadsAsTheNodesDefaults() {
    JobRequest.Body least =
        new JobRequest.Body(
            "train", "events", 256, null, null, null, null, null, null, null, null, null, null);

    assertThat(Json.parseObject(least.toJson(), "body").properties())
        .extracting(java.util.Map.Entry::getKey)
        .containsExactly("job", "dataset", "batch_rows");
    JobSpec read = JobRequest.parse(least.toJson());
    assertThat(read)
        .isEqualTo(
            new JobSpec(
                "train",
                "events",
                0,
                true,
                JobMode.DETERMINISTIC,
                List.of(),
                256,
                TailPolicy.DROP,
                JobSpec.BLOCK_ROWS_DEFAULT,
                JobSpec.WINDOW_BLOCKS_DEFAULT,
                JobSpec.RUN_ROWS_DEFAULT,
                JobSpec.LEASE_TIMEOUT_MILLIS_DEFAULT,
                false));
    // The node's own encoding of a spec is the same body with every field set.
    assertThat(JobRequest.parse(Json.bytes(JobRequest.toJson(read)))).isEqualTo(read);
  }

  @Test
  void aJobSpecRoundTripsThroughRegisterJob() {
    JobSpec spec =
        new JobSpec(
            "train",
            "events",
            11,
            false,
            JobMode.DYNAMIC,
            List.of("id"),
            256,
            TailPolicy.PAD,
            64,
            8,
            4,
            30_000,
            true);
    assertThat(JobRequest.parse(Json.bytes(JobRequest.toJson(spec)))).isEqualTo(spec);
    assertThat(
            JobRequest.parse(json("{\"job\": \"j\", \"dataset\": \"d\", \"batch_rows\": 8}"))
                .runRows())
        .isEqualTo(1);
    assertThatThrownBy(
            () ->
                JobRequest.parse(
                    json(
                        "{\"job\": \"j\", \"dataset\": \"d\", \"batch_rows\": 8,"
                            + " \"run_rows\": 0}")))
        .hasMessageContaining("Invalid run_rows: 0");
    assertThatThrownBy(
            () ->
                JobRequest.parse(
                    json(
                        "{\"job\": \"j\", \"dataset\": \"d\", \"batch_rows\": 8,"
                            + " \"block_rows\": 64, \"run_rows\": 65}")))
        .hasMessageContaining("Invalid run_rows: 65 (must be in 1..64)");
    assertThatThrownBy(
            () -> JobRequest.parse(json("{\"job\": \"j\", \"dataset\": \"d\", \"batch_rows\": 0}")))
        .hasMessageContaining("batch_rows");
  }

  @Test
  void everyNameIsCheckedWhereTheRequestIsRead() {
    String huge = "n".repeat(100_000);
    assertShortRefusal(
        () ->
            JobRequest.parse(
                json("{\"job\": \"j\", \"dataset\": \"" + huge + "\", \"batch_rows\": 1}")),
        "Invalid dataset name");
    assertShortRefusal(
        () -> JobRequest.parse(json("{\"job\": \"j\", \"dataset\": \"-x\", \"batch_rows\": 1}")),
        "Invalid dataset name: '-x'");
    assertShortRefusal(
        () ->
            JobRequest.parse(
                json("{\"job\": \"" + huge + "\", \"dataset\": \"d\", \"batch_rows\": 1}")),
        "Invalid job id");
    assertShortRefusal(
        () ->
            LoadRequest.parse(
                json("{\"name\": \"e\", \"table\": \"db.t\", \"catalog\": \"" + huge + "\"}")),
        "Invalid catalog");
    assertShortRefusal(
        () ->
            LoadRequest.parse(json("{\"name\": \"e\", \"table\": \"db.t\", \"catalog\": \"a.b\"}")),
        "Invalid catalog for dataset 'e': 'a.b'");
    assertShortRefusal(
        () -> LoadRequest.parse(json("{\"name\": \"e\", \"table\": \"" + huge + "\"}")),
        "Invalid table for dataset 'e': 100000 characters");
    assertShortRefusal(
        () ->
            LoadRequest.parse(
                json("{\"name\": \"e\", \"table\": \"t\", \"filter\": \"x = '" + huge + "'\"}")),
        "Invalid filter for dataset 'e': 100006 characters, more than the 65536");
    for (String field : List.of("mode", "tail")) {
      assertShortRefusal(
          () ->
              JobRequest.parse(
                  json(
                      "{\"job\": \"j\", \"dataset\": \"d\", \"batch_rows\": 1, \""
                          + field
                          + "\": \""
                          + huge
                          + "\"}")),
          "Invalid " + field);
    }
  }

  @Test
  void aBodyThatIsNoObjectIsQuotedByItsEnds() {
    String array = "[" + "1,".repeat(10_000) + "2]";
    assertShortRefusal(
        () -> Json.parseObject(json(array), "load action body"),
        "expected a JSON object, got [1,1,");
    // Jackson quotes the token it choked on: no more of it than an excerpt.
    assertThatThrownBy(
            () -> Json.parseObject(json("{\"a\": " + "x".repeat(10_000) + "}"), "load action body"))
        .hasMessageStartingWith("Malformed load action body: Unrecognized token 'xxx")
        .satisfies(
            e ->
                assertThat(e.getMessage())
                    .doesNotContain("x".repeat(io.floe.util.Excerpt.MAX_CHARS + 1)));
  }

  /** Refused naming {@code what}, quoting no more than an excerpt of any value. */
  private static void assertShortRefusal(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String what) {
    assertThatThrownBy(call)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(what)
        .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(400));
  }

  @Test
  void descriptorsSayTheirKindAndAnUnknownKindIsRefused() {
    JobReadRequest jobRead = new JobReadRequest("train", 3, 4, 2, 1, 99L, 2);
    assertThat(Json.parseObject(jobRead.toJson(), "command").path("kind").asText())
        .isEqualTo("job_read");
    assertThat(ReadCommand.parse(jobRead.toJson())).isEqualTo(jobRead);

    ReadRequest shard = new ReadRequest("events", 1, 4);
    assertThat(Json.parseObject(shard.toJson(), "command").path("kind").asText())
        .isEqualTo("shard_read");
    assertThat(ReadCommand.parse(shard.toJson())).isEqualTo(shard);

    assertThatThrownBy(
            () -> ReadCommand.parse(json("{\"kind\": \"sql\", \"dataset\": \"events\"}")))
        .hasMessageContaining("Unknown kind 'sql'");
    assertThatThrownBy(() -> ReadCommand.parse(json("{\"kind\": 3, \"dataset\": \"events\"}")))
        .hasMessageContaining("Field 'kind' in flight descriptor command must be");
  }

  /** Each codec reads only commands tagged with its own kind: it never guesses from the fields. */
  @Test
  void aCodecReadsOnlyCommandsOfItsOwnKind() {
    var untagged = Json.parseObject(json("{\"job\": \"train\", \"epoch\": 0}"), "command");
    assertThatThrownBy(() -> JobReadRequest.parse(untagged))
        .hasMessageContaining("Missing field 'kind' in job read command");
    var shard = Json.parseObject(new ReadRequest("events", 0, 1).toJson(), "command");
    shard.remove("dataset");
    shard.put("job", "train");
    shard.put("epoch", 0);
    shard.remove("shard_index");
    shard.remove("shard_count");
    assertThatThrownBy(() -> JobReadRequest.parse(shard))
        .hasMessageContaining(
            "Field 'kind' in job read command must be 'job_read', got 'shard_read'");
    var job = Json.parseObject(new JobReadRequest("train", 0, 1, 0, 0, null, 1).toJson(), "c");
    job.retain("kind");
    job.put("dataset", "events");
    assertThatThrownBy(() -> ReadRequest.parse(Json.bytes(job)))
        .hasMessageContaining(
            "Field 'kind' in flight descriptor command must be 'shard_read', got 'job_read'");
  }

  /**
   * A plain Flight client may leave {@code kind} out: the one name the command carries says which
   * it is ({@code job}: job_read, {@code dataset}: shard_read), as docs/protocol.md says; a command
   * naming both or neither is refused rather than guessed.
   */
  @Test
  void aCommandWithoutAKindIsTheOneItsNameSays() {
    assertThat(
            ReadCommand.parse(
                json("{\"job\": \"train\", \"epoch\": 3, \"world_size\": 4, \"rank\": 2}")))
        .isEqualTo(new JobReadRequest("train", 3, 4, 2, 0, null, 1));
    assertThat(ReadCommand.parse(json("{\"dataset\": \"events\", \"shard_count\": 2}")))
        .isEqualTo(new ReadRequest("events", 0, 2));
    assertThatThrownBy(
            () ->
                ReadCommand.parse(
                    json("{\"dataset\": \"events\", \"job\": \"train\", \"epoch\": 0}")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("without 'kind' names both 'job' and 'dataset'");
    assertThatThrownBy(() -> ReadCommand.parse(json("{\"shard_count\": 2}")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("without 'kind' names neither 'dataset' nor 'job'");
  }

  @Test
  void aJobReadMayAskForSeveralBatchesPerRecordBatchWithinBounds() {
    JobReadRequest grouped = new JobReadRequest("train", 3, 1, 0, 0, null, 1, 8);
    var command = Json.parseObject(grouped.toJson(), "command");
    assertThat(command.path("batches_per_message").asInt()).isEqualTo(8);
    assertThat(JobReadRequest.parse(command)).isEqualTo(grouped);
    // Left out when 1, as readers from before grouping send it.
    var single = Json.parseObject(new JobReadRequest("train", 3, 1, 0, 0, null, 1).toJson(), "c");
    assertThat(single.has("batches_per_message")).isFalse();
    assertThat(JobReadRequest.parse(single).batchesPerMessage()).isEqualTo(1);
    for (String value : new String[] {"0", "1025", "-3"}) {
      var body =
          Json.parseObject(
              json(
                  "{\"kind\": \"job_read\", \"job\": \"j\", \"epoch\": 0, \"batches_per_message\": "
                      + value
                      + "}"),
              "command");
      assertThatThrownBy(() -> JobReadRequest.parse(body))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("Invalid batches_per_message: " + value);
    }
  }

  @Test
  void aJobReadNamesTheNodesToAvoidWithinBounds() {
    JobReadRequest avoiding =
        new JobReadRequest("train", 3, 1, 0, 0, null, 1, 8, List.of("grpc+tcp://127.0.0.1:1"));
    var command = Json.parseObject(avoiding.toJson(), "command");
    assertThat(JobReadRequest.parse(command)).isEqualTo(avoiding);
    var plain = Json.parseObject(new JobReadRequest("train", 3, 1, 0, 0, null, 1).toJson(), "c");
    assertThat(plain.has("avoid")).as("left out when empty").isFalse();

    List<String> many = new java.util.ArrayList<>();
    for (int i = 0; i <= JobReadRequest.AVOID_MAX; i++) {
      many.add("grpc+tcp://127.0.0.1:" + (1000 + i));
    }
    assertThatThrownBy(() -> new JobReadRequest("train", 0, 1, 0, 0, null, 1, 1, many))
        .hasMessageContaining("Invalid avoid: 17 locations (at most 16)");
    String long_ = "grpc+tcp://" + "h".repeat(600);
    assertThatThrownBy(() -> new JobReadRequest("train", 0, 1, 0, 0, null, 1, 1, List.of(long_)))
        .hasMessageContaining("Invalid location in avoid")
        .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(400));
  }

  @Test
  void aLoadNamesItsReplicasWithinBounds() {
    LoadRequest replicated =
        LoadRequest.parse(json("{\"name\": \"e\", \"table\": \"/t\", \"replicas\": 2}"));
    assertThat(replicated.spec().replicas()).isEqualTo(2);
    assertThat(LoadRequest.parse(replicated.toJson())).isEqualTo(replicated);
    LoadRequest single = LoadRequest.parse(json("{\"name\": \"e\", \"table\": \"/t\"}"));
    assertThat(single.spec().replicas()).isEqualTo(1);
    assertThat(Json.parseObject(single.toJson(), "load").has("replicas")).isFalse();
    for (String value : new String[] {"0", "4", "-1"}) {
      assertThatThrownBy(
              () ->
                  LoadRequest.parse(
                      json("{\"name\": \"e\", \"table\": \"/t\", \"replicas\": " + value + "}")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("Invalid replicas: " + value);
    }
  }

  @Test
  void aJobReadOutsideItsWorldIsRefused() {
    assertThatThrownBy(() -> new JobReadRequest("train", 0, 2, 2, 0, null, 1))
        .hasMessageContaining("Invalid rank: 2");
  }

  @Test
  void smallBodiesRoundTrip() {
    RefreshRequest refresh = new RefreshRequest("events", true);
    assertThat(RefreshRequest.parse(refresh.toJson())).isEqualTo(refresh);
    assertThat(NameRequest.parse(new NameRequest("events").toJson(), Actions.STATUS).name())
        .isEqualTo("events");
    assertThat(
            JobRequests.LeaseRequest.parse(
                json("{\"job\": \"j\", \"epoch\": 2, \"worker\": \"w\"}")))
        .isEqualTo(new JobRequests.LeaseRequest("j", 2, "w"));
    assertThatThrownBy(() -> JobRequests.AckRequest.parse(json("{\"job\": \"j\", \"epoch\": 2}")))
        .hasMessageContaining("lease");
  }

  /** The job actions' small bodies: what a client writes is what the node reads. */
  @Test
  void jobActionBodiesRoundTrip() {
    var name = new JobRequests.JobName("train");
    assertThat(JobRequests.JobName.parse(name.toJson(), Actions.DROP_JOB)).isEqualTo(name);
    for (Long epoch : new Long[] {null, 3L}) {
      var status = new JobRequests.JobStatusRequest("train", epoch);
      assertThat(JobRequests.JobStatusRequest.parse(status.toJson())).isEqualTo(status);
    }
    var lease = new JobRequests.LeaseRequest("train", 2, "host-1/pid-7/w0");
    assertThat(JobRequests.LeaseRequest.parse(lease.toJson())).isEqualTo(lease);
    var ack = new JobRequests.AckRequest("train", 2, "2:17:1:5f3a9c1e", "host-1/pid-7/w0");
    assertThat(JobRequests.AckRequest.parse(ack.toJson())).isEqualTo(ack);
  }
}
