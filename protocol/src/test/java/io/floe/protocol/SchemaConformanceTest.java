package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.floe.job.EpochProgress;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.TailPolicy;
import io.floe.protocol.DatasetStatusReply.RetainedLayout;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import io.floe.tenant.Owner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every message the protocol's codecs write validates against the published schema
 * (docs/protocol.schema.json), the same document the Python client's tests hold a real node's
 * answers to: each recorded request and reply ({@link RecordedMessagesTest}) is read and written
 * again by today's codec, and the bytes written must be what the schema says that action (or reply,
 * or descriptor) carries. The recorded exchange is version 1's, so each message is also built with
 * today's codecs with every optional field set, version 2's included ({@code job_read}'s {@code
 * avoid} and {@code batches_per_message}, {@code load}'s {@code replicas}, the {@code owner} and
 * {@code replicas} of statuses, {@code cluster}'s {@code protocol_version}), and every field the
 * schema names must be written by one of them. A field renamed in a codec, or in the schema, fails
 * here.
 */
class SchemaConformanceTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static ObjectNode document;

  @BeforeAll
  static void readSchema() throws IOException {
    document = (ObjectNode) JSON.readTree(Path.of("..", "docs", "protocol.schema.json").toFile());
  }

  /** The schema of one definition ({@code #/$defs/name}), with every definition it may refer to. */
  private static Schema schema(String ref) {
    ObjectNode root = JSON.createObjectNode();
    root.put("$schema", document.get("$schema").asText());
    root.put("$ref", ref);
    root.set("$defs", document.get("$defs"));
    return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
        .getSchema(root.toString());
  }

  /** Where the schema describes a recorded message: its action's body or reply, or a command. */
  private static String ref(String message) {
    if (message.equals("command-read")) {
      return "#/$defs/shard_read";
    }
    if (message.equals("command-job-read")) {
      return "#/$defs/job_read";
    }
    String action = message.substring(message.indexOf('-') + 1);
    JsonNode refs =
        document.get(message.startsWith("reply-") ? "x-floe-replies" : "x-floe-actions");
    assertThat(refs.has(action)).as("the schema names %s", message).isTrue();
    return refs.get(action).asText();
  }

  static Stream<String> messages() {
    return Stream.concat(
            RecordedMessagesTest.REPLIES.keySet().stream(),
            RecordedMessagesTest.REQUESTS.keySet().stream())
        .sorted();
  }

  @ParameterizedTest
  @MethodSource("messages")
  void whatACodecWritesIsWhatTheSchemaDescribes(String message) throws IOException {
    Function<byte[], byte[]> codec =
        message.startsWith("reply-")
            ? RecordedMessagesTest.REPLIES.get(message)
            : RecordedMessagesTest.REQUESTS.get(message);
    JsonNode written = JSON.readTree(codec.apply(RecordedMessagesTest.recorded(message)));

    List<Error> errors = schema(ref(message)).validate(written);

    assertThat(errors).as("%s against %s:\n%s", message, ref(message), written).isEmpty();
  }

  private static final JobSpec JOB =
      new JobSpec(
          "resnet-a",
          "clicks",
          7,
          true,
          JobMode.DYNAMIC,
          List.of("id", "x"),
          256,
          TailPolicy.PAD,
          4096,
          16,
          8,
          30_000,
          true);

  private static final DatasetStatusReply READY =
      new DatasetStatusReply(
          "clicks",
          State.READY,
          new TableSource.InCatalog("lake", "db.clicks"),
          8,
          8,
          1_200_000,
          98_566_144,
          7404129980528170357L,
          4.2,
          Map.of("vectorized", 7, "generic", 1),
          new RefreshReply(
              "FAILED", 6911, 7404L, 6, 2, 1, 1.3, new ErrorReply("NOT_FOUND", "gone")),
          List.of(new RetainedLayout(6911, "3f9a0c2e5b7d1e44", 7, 1_100_000, List.of("resnet-a"))),
          null,
          false,
          false,
          new Owner("team-a", "ops"),
          2);

  private static final DatasetStatusReply FAILED =
      new DatasetStatusReply(
              "big",
              State.FAILED,
              new TableSource.AtLocation("/data/big"),
              1,
              4,
              0,
              0,
              42L,
              null,
              Map.of(),
              null,
              List.of(),
              new ErrorReply("RESOURCE_EXHAUSTED", "slice 'big/1' of dataset 'big': memory limit"),
              false,
              false,
              Owner.LEGACY,
              3)
          .asStale()
          .asDropped();

  private static final JobStatusReply JOB_STATUS =
      new JobStatusReply(
          JOB,
          3,
          1_000_000,
          74041299805L,
          "3f9a0c2e5b7d1e44",
          3906,
          List.of(
              new JobStatusReply.LayoutRun(0, "77c1d0a9e3b2f456", 69112, 900_000),
              new JobStatusReply.LayoutRun(3, "3f9a0c2e5b7d1e44", 74041299805L, 1_000_000)),
          new JobStatusReply.Counters(512, 256, 0, 1),
          List.of(new EpochProgress(0, 3906, 3000, 6, 900)),
          false,
          new Owner("team-a", "system:serviceaccount:team-a:trainer"));

  private static Arguments message(String name, String ref, byte[] bytes) {
    return Arguments.of(name, ref, bytes);
  }

  /**
   * Every request and reply as today's codecs write it with every optional field set (and each
   * variant of a sealed answer), beside where the schema describes it.
   */
  static Stream<Arguments> everyField() {
    String location = "grpc+tcp://10.0.0.7:47470";
    List<Arguments> messages =
        new ArrayList<>(
            List.of(
                message(
                    "load from a catalog at a snapshot, with replicas",
                    "#/$defs/load",
                    new LoadRequest(
                            new DatasetSpec(
                                "clicks",
                                "db.clicks",
                                "lake",
                                7404L,
                                null,
                                List.of("id", "x"),
                                "id < 10",
                                4096,
                                2),
                            true)
                        .toJson()),
                message(
                    "load as of an instant",
                    "#/$defs/load",
                    new LoadRequest(
                            new DatasetSpec(
                                "clicks",
                                "/data/clicks",
                                null,
                                null,
                                1_714_521_600_000L,
                                List.of("id"),
                                null,
                                4096,
                                3),
                            false)
                        .toJson()),
                message(
                    "load the latest snapshot",
                    "#/$defs/load",
                    new LoadRequest(
                            new DatasetSpec(
                                "clicks",
                                "/data/clicks",
                                null,
                                null,
                                null,
                                List.of(),
                                null,
                                512,
                                2),
                            true,
                            true)
                        .toJson()),
                message("status", "#/$defs/name", new NameRequest("clicks").toJson()),
                message("refresh", "#/$defs/refresh", new RefreshRequest("clicks", true).toJson()),
                message("register_job", "#/$defs/register_job", Json.bytes(JobRequest.toJson(JOB))),
                message(
                    "job_status",
                    "#/$defs/job_status",
                    new JobRequests.JobStatusRequest("resnet-a", 3L).toJson()),
                message(
                    "drop_job", "#/$defs/drop_job", new JobRequests.JobName("resnet-a").toJson()),
                message(
                    "lease",
                    "#/$defs/lease",
                    new JobRequests.LeaseRequest("resnet-a", 0, "w-1").toJson()),
                message(
                    "ack",
                    "#/$defs/ack",
                    new JobRequests.AckRequest("resnet-a", 0, "0:17:1:5f3a9c1e", "w-1").toJson()),
                message(
                    "shard_read", "#/$defs/shard_read", new ReadRequest("clicks", 1, 4).toJson()),
                message(
                    "job_read with avoid and batches_per_message",
                    "#/$defs/job_read",
                    new JobReadRequest("resnet-a", 3, 4, 1, 8, 40L, 4, 16, List.of(location))
                        .toJson()),
                message("status of a READY dataset", "#/$defs/dataset_status", READY.encode()),
                message(
                    "status of a FAILED, dropped dataset, answered stale",
                    "#/$defs/dataset_status",
                    FAILED.encode()),
                message(
                    "list",
                    "#/$defs/dataset_list",
                    DatasetStatusReply.encodeList(List.of(READY, FAILED))),
                message("job status", "#/$defs/job_status_reply", JOB_STATUS.encode()),
                message(
                    "a dropped job's status",
                    "#/$defs/job_status_reply",
                    JOB_STATUS.asDropped().encode()),
                message(
                    "list_jobs",
                    "#/$defs/job_list",
                    JobStatusReply.encodeList(List.of(JOB_STATUS, JOB_STATUS.asDropped()))),
                message(
                    "lease: leased",
                    "#/$defs/lease_reply",
                    new LeaseReply.Leased("0:17:1:5f3a9c1e", 0, 17, 256).encode()),
                message("lease: wait", "#/$defs/lease_reply", new LeaseReply.Wait(200).encode()),
                message("lease: done", "#/$defs/lease_reply", new LeaseReply.Done().encode()),
                message(
                    "cluster with a warning",
                    "#/$defs/cluster_view",
                    new ClusterViewReply(
                            "pekko://floe@10.0.0.1:25520",
                            List.of(
                                new ClusterViewReply.Member(
                                    "pekko://floe@10.0.0.1:25520", "Up", List.of("data"))),
                            List.of("pekko://floe@10.0.0.3:25520"),
                            1,
                            2,
                            "only 1 data nodes are Up",
                            new ClusterViewReply.Memory(1_024, 1L << 30, 3))
                        .encode())));
    for (AckReply ack : AckReply.values()) {
      messages.add(message("ack: " + ack, "#/$defs/ack_reply", ack.encode()));
    }
    for (ErrorCode code : ErrorCode.values()) {
      messages.add(message("error details: " + code, "#/$defs/error_details", code.details()));
    }
    return messages.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("everyField")
  void whatACodecWritesWithEveryFieldSetIsWhatTheSchemaDescribes(
      String message, String ref, byte[] bytes) throws IOException {
    JsonNode written = JSON.readTree(bytes);

    List<Error> errors = schema(ref).validate(written);

    assertThat(errors).as("%s against %s:\n%s", message, ref, written).isEmpty();
  }

  /**
   * No field of the schema goes unchecked: each one it names, in every definition, is written by a
   * codec in one of the messages above or the recorded ones. A field added to the schema (or to a
   * codec and the schema) needs a message here that carries it.
   */
  @Test
  void everyFieldTheSchemaNamesIsWrittenByACodecHere() throws IOException {
    Set<String> written = new TreeSet<>();
    everyField()
        .forEach(
            arguments ->
                written(
                    pointer((String) arguments.get()[1]),
                    tree((byte[]) arguments.get()[2]),
                    null,
                    written));
    for (String message : messages().toList()) {
      Function<byte[], byte[]> codec =
          message.startsWith("reply-")
              ? RecordedMessagesTest.REPLIES.get(message)
              : RecordedMessagesTest.REQUESTS.get(message);
      written(
          pointer(ref(message)),
          tree(codec.apply(RecordedMessagesTest.recorded(message))),
          null,
          written);
    }
    Set<String> named = new TreeSet<>();
    document
        .get("$defs")
        .fields()
        .forEachRemaining(definition -> named(definition.getValue(), definition.getKey(), named));

    assertThat(named).isNotEmpty().hasSizeGreaterThan(100);
    assertThat(new TreeSet<>(named))
        .as("fields the schema names that no codec wrote here")
        .satisfies(names -> names.removeAll(written))
        .isEmpty();
  }

  private static JsonNode pointer(String ref) {
    ObjectNode node = JSON.createObjectNode();
    node.put("$ref", ref);
    return node;
  }

  private static JsonNode tree(byte[] bytes) {
    try {
      return JSON.readTree(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every property {@code schema} declares, as {@code definition/field/field}. */
  private static void named(JsonNode schema, String path, Set<String> names) {
    for (Iterator<Map.Entry<String, JsonNode>> it = schema.path("properties").fields();
        it.hasNext(); ) {
      Map.Entry<String, JsonNode> property = it.next();
      names.add(path + "/" + property.getKey());
      named(property.getValue(), path + "/" + property.getKey(), names);
    }
    for (String choice : List.of("oneOf", "anyOf")) {
      schema.path(choice).forEach(alternative -> named(alternative, path, names));
    }
    if (schema.path("items").isObject()) {
      named(schema.get("items"), path + "[]", names);
    }
    if (schema.path("additionalProperties").isObject()) {
      names.add(path + "/*");
      named(schema.get("additionalProperties"), path + "/*", names);
    }
  }

  /**
   * Every property of {@code schema} that {@code message} carries, named as {@link #named} does.
   */
  private static void written(JsonNode schema, JsonNode message, String path, Set<String> names) {
    if (schema.has("$ref")) {
      String ref = schema.get("$ref").asText();
      String definition = ref.substring(ref.lastIndexOf('/') + 1);
      written(document.get("$defs").get(definition), message, definition, names);
      return;
    }
    for (String choice : List.of("oneOf", "anyOf")) {
      schema.path(choice).forEach(alternative -> written(alternative, message, path, names));
    }
    if (message.isArray() && schema.path("items").isObject()) {
      message.forEach(element -> written(schema.get("items"), element, path + "[]", names));
    }
    if (!message.isObject()) {
      return;
    }
    JsonNode properties = schema.path("properties");
    for (Iterator<Map.Entry<String, JsonNode>> it = message.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> field = it.next();
      if (properties.has(field.getKey())) {
        names.add(path + "/" + field.getKey());
        written(
            properties.get(field.getKey()), field.getValue(), path + "/" + field.getKey(), names);
      } else if (schema.path("additionalProperties").isObject()) {
        names.add(path + "/*");
        written(schema.get("additionalProperties"), field.getValue(), path + "/*", names);
      }
    }
  }

  @Test
  void aRenamedFieldIsCaught() throws IOException {
    ObjectNode status =
        (ObjectNode)
            JSON.readTree(
                RecordedMessagesTest.REPLIES
                    .get("reply-status")
                    .apply(RecordedMessagesTest.recorded("reply-status")));
    status.set("slices_count", status.remove("slices_total"));

    assertThat(schema("#/$defs/dataset_status").validate(status))
        .extracting(Error::getMessage)
        .anySatisfy(text -> assertThat(text).contains("slices_total"));
  }

  @Test
  void everyActionHasItsBodyAndItsReplyDescribed() throws IllegalAccessException {
    int actions = 0;
    for (java.lang.reflect.Field field : Actions.class.getFields()) {
      String action = (String) field.get(null);
      assertThat(document.get("x-floe-actions").has(action)).as("body of %s", action).isTrue();
      assertThat(document.get("x-floe-replies").has(action)).as("reply of %s", action).isTrue();
      actions++;
    }
    assertThat(actions).isEqualTo(12);
  }
}
