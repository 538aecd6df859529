package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every message the protocol's codecs write validates against the published schema
 * (docs/protocol.schema.json), the same document the Python client's tests hold a real node's
 * answers to: each recorded request and reply ({@link RecordedMessagesTest}) is read and written
 * again by today's codec, and the bytes written must be what the schema says that action (or reply,
 * or descriptor) carries. A field renamed in a codec, or in the schema, fails here.
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
