package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The compatibility promise of docs/protocol.md ("Versions"), held against messages recorded from a
 * real exchange (the Python client's requests, a node's replies: resources recorded/v1): within a
 * protocol version every request recorded then is still read by today's codecs, and every reply
 * recorded then, read and written again by today's codecs, still carries each field it had, with
 * the same value. A field renamed or dropped on either side fails here.
 */
class RecordedMessagesTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  static final Map<String, Function<byte[], byte[]>> REPLIES =
      Map.ofEntries(
          Map.entry("reply-status", b -> DatasetStatusReply.parse(b).encode()),
          Map.entry("reply-load", b -> DatasetStatusReply.parse(b).encode()),
          Map.entry("reply-refresh", b -> DatasetStatusReply.parse(b).encode()),
          Map.entry("reply-drop", b -> DatasetStatusReply.parse(b).encode()),
          Map.entry(
              "reply-list", b -> DatasetStatusReply.encodeList(DatasetStatusReply.parseList(b))),
          Map.entry("reply-register_job", b -> JobStatusReply.parse(b).encode()),
          Map.entry("reply-job_status", b -> JobStatusReply.parse(b).encode()),
          Map.entry("reply-drop_job", b -> JobStatusReply.parse(b).encode()),
          Map.entry("reply-list_jobs", b -> JobStatusReply.encodeList(JobStatusReply.parseList(b))),
          Map.entry("reply-lease", b -> LeaseReply.parse(b).encode()),
          Map.entry("reply-ack", b -> AckReply.parse(b).encode()),
          Map.entry("reply-cluster", b -> ClusterViewReply.parse(b).encode()));

  static final Map<String, Function<byte[], byte[]>> REQUESTS =
      Map.ofEntries(
          Map.entry("request-load", b -> LoadRequest.parse(b).toJson()),
          Map.entry("request-refresh", b -> RefreshRequest.parse(b).toJson()),
          Map.entry("request-status", b -> NameRequest.parse(b, Actions.STATUS).toJson()),
          Map.entry("request-drop", b -> NameRequest.parse(b, Actions.DROP).toJson()),
          Map.entry(
              "request-register_job", b -> Json.bytes(JobRequest.toJson(JobRequest.parse(b)))),
          Map.entry("request-job_status", b -> JobRequests.JobStatusRequest.parse(b).toJson()),
          Map.entry("request-lease", b -> JobRequests.LeaseRequest.parse(b).toJson()),
          Map.entry("request-ack", b -> JobRequests.AckRequest.parse(b).toJson()),
          Map.entry(
              "request-drop_job", b -> JobRequests.JobName.parse(b, Actions.DROP_JOB).toJson()),
          Map.entry("command-read", b -> ReadRequest.parse(b).toJson()),
          Map.entry(
              "command-job-read",
              b -> JobReadRequest.parse(Json.parseObject(b, "command")).toJson()));

  @ParameterizedTest
  @ValueSource(
      strings = {
        "reply-status",
        "reply-load",
        "reply-refresh",
        "reply-drop",
        "reply-list",
        "reply-register_job",
        "reply-job_status",
        "reply-drop_job",
        "reply-list_jobs",
        "reply-lease",
        "reply-ack",
        "reply-cluster",
        "request-load",
        "request-refresh",
        "request-status",
        "request-drop",
        "request-register_job",
        "request-job_status",
        "request-lease",
        "request-ack",
        "request-drop_job",
        "command-read",
        "command-job-read"
      })
  void aVersionOneMessageIsReadAndKeepsEveryField(String message) throws IOException {
    byte[] recorded = recorded(message);
    Function<byte[], byte[]> codec =
        message.startsWith("reply-") ? REPLIES.get(message) : REQUESTS.get(message);
    JsonNode again = JSON.readTree(codec.apply(recorded));
    assertKept(JSON.readTree(recorded), again, message);
  }

  static byte[] recorded(String message) throws IOException {
    try (InputStream in =
        RecordedMessagesTest.class.getResourceAsStream("/recorded/v1/" + message + ".json")) {
      assertThat(in).as("recorded/v1/%s.json", message).isNotNull();
      return in.readAllBytes();
    }
  }

  /** Every field of {@code recorded}, at any depth, is in {@code again} with the same value. */
  private static void assertKept(JsonNode recorded, JsonNode again, String path) {
    if (recorded.isObject()) {
      assertThat(again.isObject()).as("%s is an object", path).isTrue();
      Iterator<Map.Entry<String, JsonNode>> fields = ((ObjectNode) recorded).fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        String at = path + "." + field.getKey();
        assertThat(again.has(field.getKey())).as("%s is still written", at).isTrue();
        assertKept(field.getValue(), again.get(field.getKey()), at);
      }
    } else if (recorded.isArray()) {
      assertThat(again.size()).as("%s's length", path).isEqualTo(recorded.size());
      for (int i = 0; i < recorded.size(); i++) {
        assertKept(recorded.get(i), again.get(i), path + "[" + i + "]");
      }
    } else if (recorded.isNumber()) {
      assertThat(again.isNumber()).as("%s is a number", path).isTrue();
      assertThat(again.decimalValue()).as(path).isEqualByComparingTo(recorded.decimalValue());
    } else {
      assertThat(again).as(path).isEqualTo(recorded);
    }
  }
}
