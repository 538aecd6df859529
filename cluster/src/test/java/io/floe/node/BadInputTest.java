package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.Json;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import io.floe.ticket.FloeTicket;
import io.floe.ticket.TicketSigner;
import io.floe.util.Excerpt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every bad input gets the matching Flight status and a message naming what was wrong, and the node
 * goes on serving a good dataset afterwards with all of its rows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputTest {
  private FloeNode node;
  private BufferAllocator allocator;
  private FloeClient client;
  private FlightClient raw;
  private IcebergTestTables.TestTable table;
  private Path dir;

  @BeforeAll
  void start(@TempDir Path tempDir) {
    dir = tempDir;
    table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 1_000, TestRows.events(2));
    node = TestNodes.start();
    allocator = new RootAllocator();
    client = FloeClient.connect(allocator, node.location());
    raw = FlightClient.builder(allocator, node.location()).build();
    client.load(new LoadRequest(DatasetSpec.of("good", table.metadataLocation()), true));
  }

  @AfterAll
  void stop() throws Exception {
    raw.close();
    client.close();
    allocator.close();
    node.close();
  }

  /** The call fails with this status and Floe error code, and a message naming each part. */
  private static void assertStatus(
      ThrowingCallable call, FlightStatusCode code, ErrorCode floeCode, String... messageParts) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).as(e.getMessage()).isEqualTo(code);
              assertThat(ErrorCode.of(e)).as(e.getMessage()).contains(floeCode);
              for (String part : messageParts) {
                assertThat(e.status().description()).contains(part);
              }
            });
  }

  private void action(String type, String body) {
    raw.doAction(new Action(type, body.getBytes(StandardCharsets.UTF_8))).forEachRemaining(r -> {});
  }

  @Test
  void malformedJsonIsInvalidArgument() {
    assertStatus(
        () -> action("load", "{not json"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "Malformed");
    assertStatus(
        () -> action("load", "{\"name\": \"x\"}"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "Missing field 'table'");
    assertStatus(
        () -> action("load", "{\"name\": \"x\", \"table\": \"/t\", \"colums\": []}"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "Unknown field 'colums'");
    assertStatus(
        () -> action("load", "{\"name\": \"x\", \"table\": \"/t\", \"batch_rows\": 0}"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "batch_rows");
    assertStatus(
        () -> action("frobnicate", "{}"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "Unknown action");
    assertStatus(
        () -> raw.getInfo(FlightDescriptor.command("[1,2]".getBytes(StandardCharsets.UTF_8))),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "expected a JSON object");
  }

  @Test
  void aCommandOfAnUnknownKindIsInvalid() {
    assertStatus(
        () -> info("{\"kind\": \"bulk_read\", \"dataset\": \"good\"}"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "Unknown kind 'bulk_read'");
    // The kind decides, not the fields: a shard read that names a job field is refused as such.
    assertStatus(
        () -> info("{\"kind\": \"shard_read\", \"dataset\": \"good\", \"job\": \"j\"}"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "Unknown field 'job'");
  }

  @Test
  void unknownDatasetIsNotFound() {
    try (CapturedLogs logs = CapturedLogs.open()) {
      assertStatus(
          () -> client.plan("nope", 0, 1),
          FlightStatusCode.NOT_FOUND,
          ErrorCode.DATASET_NOT_FOUND,
          "nope");
      assertStatus(
          () -> client.drop("nope"),
          FlightStatusCode.NOT_FOUND,
          ErrorCode.DATASET_NOT_FOUND,
          "nope");
      assertThat(client.status("nope").state()).isEqualTo(State.ABSENT);
      // Asking about a name is no news for the operator: a line each would flood the log.
      assertThat(logs.operatorLines()).noneSatisfy(line -> assertThat(line).contains("'nope'"));
    }
  }

  @Test
  void shardIndexOutOfRangeIsInvalidArgument() {
    assertStatus(
        () -> info("{\"dataset\": \"good\", \"shard_index\": 2, \"shard_count\": 2}"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "shard_index: 2");
    assertStatus(
        () -> info("{\"dataset\": \"good\", \"shard_index\": 0, \"shard_count\": 0}"),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "shard_count: 0");
  }

  @Test
  void missingTableIsNotFound() {
    String missing = dir.resolve("no-such-table").toString();
    assertStatus(
        () -> client.load(new LoadRequest(DatasetSpec.of("missing", missing), false)),
        FlightStatusCode.NOT_FOUND,
        ErrorCode.TABLE_NOT_FOUND,
        "no-such-table");
  }

  @Test
  void badColumnsAndFiltersAreInvalidArgument() {
    assertStatus(
        () ->
            client.load(
                new LoadRequest(
                    DatasetSpec.of("cols", table.metadataLocation())
                        .withColumns(List.of("id", "colour")),
                    false)),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "Unknown column 'colour'");
    assertStatus(
        () ->
            client.load(
                new LoadRequest(
                    DatasetSpec.of("filt", table.metadataLocation()).withFilter("amount >= "),
                    false)),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "position");
    assertStatus(
        () ->
            client.load(
                new LoadRequest(
                    DatasetSpec.of("snap", table.metadataLocation()).withSnapshotId(42L), false)),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "no snapshot 42");
  }

  @Test
  void sameNameWithOtherSettingsIsAlreadyExists() {
    assertStatus(
        () ->
            client.load(
                new LoadRequest(
                    DatasetSpec.of("good", table.metadataLocation()).withBatchRows(7), false)),
        FlightStatusCode.ALREADY_EXISTS,
        ErrorCode.ALREADY_EXISTS,
        "already loaded");
  }

  /**
   * A load that could not succeed under any name says why, even under a name that is taken: the
   * caller has two things to fix, and ALREADY_EXISTS would name only one.
   */
  @Test
  void aBadLoadUnderATakenNameSaysWhatIsWrongWithIt() {
    assertStatus(
        () ->
            client.load(
                new LoadRequest(
                    DatasetSpec.of("good", table.metadataLocation()).withFilter("amount >= "),
                    false)),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "position");
    assertStatus(
        () ->
            client.load(
                new LoadRequest(
                    DatasetSpec.of("good", table.metadataLocation())
                        .withColumns(List.of("id", "colour")),
                    false)),
        FlightStatusCode.INVALID_ARGUMENT,
        ErrorCode.INVALID_REQUEST,
        "Unknown column 'colour'");
    assertStatus(
        () ->
            client.load(
                new LoadRequest(
                    DatasetSpec.of("good", dir.resolve("no-such-table").toString()), false)),
        FlightStatusCode.NOT_FOUND,
        ErrorCode.TABLE_NOT_FOUND,
        "no-such-table");
  }

  @Test
  void forgedOrAlteredTicketsAreRejected() {
    assertStatus(
        () -> drain(new Ticket("garbage".getBytes(StandardCharsets.UTF_8))),
        FlightStatusCode.UNAUTHENTICATED,
        ErrorCode.TICKET_INVALID,
        "ticket");
    String unsigned =
        "{\"kind\":\"slice\",\"dataset\":\"good\",\"slice\":\"good/1/0\",\"from\":0,\"to\":1}";
    assertStatus(
        () -> drain(new Ticket(unsigned.getBytes(StandardCharsets.UTF_8))),
        FlightStatusCode.UNAUTHENTICATED,
        ErrorCode.TICKET_INVALID,
        "not signed");
    // Signed with the cluster's secret, but for a slice nobody holds.
    TicketSigner signer =
        new TicketSigner(
            TestNodes.TICKET_SECRET.getBytes(StandardCharsets.UTF_8), Duration.ofMinutes(1));
    assertStatus(
        () -> drain(signer.sign(new FloeTicket("good", "good/1/999", 0, 1))),
        FlightStatusCode.NOT_FOUND,
        ErrorCode.SLICE_NOT_HELD,
        "good/1/999");
  }

  @Test
  void emptyAndOverlongNamesAreInvalidAtOnce() {
    try (CapturedLogs logs = CapturedLogs.open()) {
      badNamesEverywhere();
      // Refused before any entity started (which would log the name): nothing logged them.
      assertThat(logs.lines()).noneSatisfy(line -> assertThat(line).contains("n".repeat(64)));
    }
  }

  private void badNamesEverywhere() {
    String huge = "n".repeat(100_000);
    long started = System.nanoTime();
    for (String name : new String[] {"", huge, "../x", "bad name"}) {
      String quoted = com.fasterxml.jackson.databind.node.TextNode.valueOf(name).toString();
      for (String type : new String[] {"status", "drop", "refresh"}) {
        assertShortInvalid(() -> action(type, "{\"name\": " + quoted + "}"));
      }
      for (String type : new String[] {"job_status", "drop_job"}) {
        assertShortInvalid(() -> action(type, "{\"job\": " + quoted + "}"));
      }
      assertShortInvalid(() -> action("lease", "{\"job\": " + quoted + ", \"epoch\": 0}"));
      assertShortInvalid(
          () ->
              action(
                  "ack",
                  "{\"job\": " + quoted + ", \"epoch\": 0, \"lease\": \"l\", \"worker\": \"w\"}"));
      assertShortInvalid(
          () ->
              action(
                  "register_job",
                  "{\"job\": \"j\", \"dataset\": " + quoted + ", \"batch_rows\": 10}"));
      assertShortInvalid(
          () ->
              action(
                  "register_job",
                  "{\"job\": " + quoted + ", \"dataset\": \"good\", \"batch_rows\": 10}"));
      assertShortInvalid(() -> info("{\"dataset\": " + quoted + "}"));
      assertShortInvalid(() -> info("{\"job\": " + quoted + ", \"epoch\": 0}"));
      if (!name.isEmpty()) {
        assertShortInvalid(() -> raw.getInfo(FlightDescriptor.path(name)));
      }
    }
    assertShortInvalid(() -> raw.getInfo(FlightDescriptor.path("")));
    assertShortInvalid(
        () ->
            action(
                "ack",
                "{\"job\": \"j\", \"epoch\": 0, \"lease\": \""
                    + "l".repeat(10_000)
                    + "\", \"worker\": \"w\"}"));
    // Refused before any entity is asked: no waiting for the cluster's ask timeout.
    assertThat(java.time.Duration.ofNanos(System.nanoTime() - started))
        .isLessThan(java.time.Duration.ofSeconds(20));
  }

  @Test
  void hugeOrDeeplyNestedBodiesAreInvalid() {
    String big = "{\"name\": \"x\", \"table\": \"" + "t".repeat(2 << 20) + "\"}";
    assertShortInvalid(() -> action("load", big));
    String deep = "{\"name\": \"x\", \"table\": \"/t\", \"filter\": " + "[".repeat(5_000);
    assertShortInvalid(() -> action("load", deep));
    String unknownField = "{\"" + "f".repeat(50_000) + "\": 1}";
    assertShortInvalid(() -> action("status", unknownField));
  }

  /**
   * INVALID_REQUEST with a description within the documented limits: at most 1,024 characters,
   * quoting no more than 128 characters of any one value (each input here repeats one piece).
   */
  private static void assertShortInvalid(ThrowingCallable call, String... repeatedInput) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code())
                  .as(e.getMessage())
                  .isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
              assertThat(ErrorCode.of(e)).as(e.getMessage()).contains(ErrorCode.INVALID_REQUEST);
              assertThat(e.status().description())
                  .hasSizeLessThanOrEqualTo(Excerpt.MAX_DESCRIPTION_CHARS);
              for (String piece : repeatedInput) {
                int pieces = Excerpt.MAX_CHARS / piece.length() + 1;
                assertThat(e.status().description())
                    .as("quotes more than %s characters of the input", Excerpt.MAX_CHARS)
                    .doesNotContain(piece.repeat(pieces));
              }
            });
  }

  @Test
  void descriptionsQuoteInputsWithinTheDocumentedLimits() {
    // A path descriptor of many long elements.
    assertShortInvalid(
        () -> raw.getInfo(FlightDescriptor.path(Collections.nCopies(100, "p".repeat(1_000)))), "p");
    // Refused filters: a syntax error at the end of a long one, and one too long to read.
    String longFilter = "amount >= 1 and ".repeat(3_000) + "amount >= ";
    assertShortInvalid(() -> load("long-filter", longFilter), "amount >= 1 and ");
    assertShortInvalid(
        () -> load("huge-filter", "id = 1 or ".repeat(10_000) + "true"), "id = 1 or ");
    // Parser tokens: a long string where an operator belongs, a long column name.
    assertShortInvalid(() -> load("token", "amount 'x" + "x".repeat(5_000) + "'"), "x");
    assertShortInvalid(() -> load("column", "c".repeat(5_000) + " = 1"), "c");
    // An Iceberg JSON expression that Iceberg cannot read.
    assertShortInvalid(
        () -> load("json", "{\"type\": \"eq\", \"term\": \"" + "t".repeat(5_000) + "\"}"), "t");
    // Body previews: a body that is no JSON object, one that is no JSON.
    assertShortInvalid(() -> action("status", "[" + "1,".repeat(5_000) + "1]"), "1,");
    assertShortInvalid(() -> action("status", "{\"name\": " + "z".repeat(5_000) + "}"), "z");
  }

  /**
   * An Iceberg JSON filter whose transform term Iceberg cannot bind (an unknown transform, a
   * literal the transform's result cannot hold) or that reaches inside a list or map is the
   * caller's mistake, INVALID_ARGUMENT when the load is planned; it was INTERNAL, at planning or,
   * for a field inside a list, on every slice.
   */
  @Test
  void transformTermsThatCannotBindAreInvalidFilters() {
    IcebergTestTables.TestTable nested =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(1, 100, TestRows.allTypes(5));
    String[][] filters = {
      {"truncate[-1]", "string_col", "\"a\"", "truncate[-1]"},
      {"day", "ts_col", "\"x\"", "'x'"},
      {"truncate[2]", "dec_9_2", "\"x\"", "decimal digit"},
      {"identity", "int_list.element", "1", "is inside list 'int_list'"},
      {"bucket[4]", "str_int_map.key", "1", "is inside map 'str_int_map'"},
    };
    for (String[] f : filters) {
      String json =
          "{\"type\": \"eq\", \"term\": {\"type\": \"transform\", \"transform\": \""
              + f[0]
              + "\", \"term\": \""
              + f[1]
              + "\"}, \"value\": "
              + f[2]
              + "}";
      ObjectNode body = Json.object();
      body.put("name", "transform");
      body.put("table", nested.metadataLocation());
      body.put("filter", json);
      body.put("wait", true);
      assertStatus(
          () -> raw.doAction(new Action("load", Json.bytes(body))).forEachRemaining(r -> {}),
          FlightStatusCode.INVALID_ARGUMENT,
          ErrorCode.INVALID_REQUEST,
          "Invalid filter",
          f[3]);
    }
    assertThat(client.read(client.plan("good", 0, 1), root -> {})).isEqualTo(2_000);
  }

  /**
   * A table location may have 4,096 characters; the refusals that name it (no table there, an
   * unsupported scheme) and the log lines about the failed load quote it as every location is
   * quoted: whole up to 512 characters, else by its ends and its length, within a description of at
   * most 1,024.
   */
  @Test
  void longTableLocationsAreQuotedWithinTheLimits() {
    // The mark sits past the first 256 characters and more than 256 before the end: an excerpt
    // leaves it out, a location quoted whole (and cut to 1,024) does not.
    String segments = "x".repeat(99) + "/";
    String longPath =
        dir.resolve(segments.repeat(3) + "MIDDLE-OF-THE-PATH/" + segments.repeat(36) + "t")
            .toString();
    try (CapturedLogs logs = CapturedLogs.open()) {
      assertQuotedWithinLimits(
          () -> loadTable("long-dir", longPath),
          FlightStatusCode.NOT_FOUND,
          ErrorCode.TABLE_NOT_FOUND);
      assertQuotedWithinLimits(
          () -> loadTable("long-metadata", longPath + "/v1.metadata.json"),
          FlightStatusCode.NOT_FOUND,
          ErrorCode.TABLE_NOT_FOUND);
      assertQuotedWithinLimits(
          () -> loadTable("long-scheme", "http://example.invalid/" + longPath),
          FlightStatusCode.INVALID_ARGUMENT,
          ErrorCode.INVALID_REQUEST);
      assertThat(logs.lines()).noneSatisfy(line -> assertThat(line).contains("MIDDLE-OF-THE-PATH"));
    }
    assertThat(client.read(client.plan("good", 0, 1), root -> {})).isEqualTo(2_000);
  }

  private static void assertQuotedWithinLimits(
      ThrowingCallable call, FlightStatusCode status, ErrorCode code) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).as(e.getMessage()).isEqualTo(status);
              assertThat(ErrorCode.of(e)).as(e.getMessage()).contains(code);
              assertThat(e.status().description())
                  .hasSizeLessThanOrEqualTo(Excerpt.MAX_DESCRIPTION_CHARS)
                  .doesNotContain("MIDDLE-OF-THE-PATH")
                  // The excerpt says how long the location was.
                  .contains(" characters)");
            });
  }

  private void loadTable(String name, String location) {
    ObjectNode body = Json.object();
    body.put("name", name);
    body.put("table", location);
    body.put("wait", true);
    raw.doAction(new Action("load", Json.bytes(body))).forEachRemaining(r -> {});
  }

  /** A load sent raw, so that the node refuses it, not the Java client's own checks. */
  private void load(String name, String filter) {
    ObjectNode body = Json.object();
    body.put("name", name);
    body.put("table", table.metadataLocation());
    body.put("filter", filter);
    raw.doAction(new Action("load", Json.bytes(body))).forEachRemaining(r -> {});
  }

  @Test
  void nodeKeepsServingAfterBadInput() {
    malformedJsonIsInvalidArgument();
    forgedOrAlteredTicketsAreRejected();
    emptyAndOverlongNamesAreInvalidAtOnce();
    hugeOrDeeplyNestedBodiesAreInvalid();
    long rows = client.read(client.plan("good", 0, 1), root -> {});
    assertThat(rows).isEqualTo(2_000);
  }

  private void info(String command) {
    raw.getInfo(FlightDescriptor.command(command.getBytes(StandardCharsets.UTF_8)));
  }

  private void drain(Ticket ticket) throws Exception {
    try (FlightStream stream = raw.getStream(ticket)) {
      while (stream.next()) {
        // consume
      }
    }
  }
}
