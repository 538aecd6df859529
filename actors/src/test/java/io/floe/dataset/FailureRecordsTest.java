package io.floe.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import io.floe.error.ErrorKind;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A failure kept in a dataset's status (persisted in floe.state.dir, replicated to other nodes) by
 * a node from before {@link ErrorKind} (when the kind was loader's {@code FailureKind}) still
 * reads: the field names and the kinds' names are what they were.
 */
class FailureRecordsTest {
  private static final ObjectMapper CBOR = new ObjectMapper(new CBORFactory());

  /** Every name the earlier {@code FailureKind} could write. */
  private static final List<String> EARLIER_KINDS =
      List.of(
          "INVALID_ARGUMENT",
          "ALREADY_EXISTS",
          "NOT_FOUND",
          "DATASET_NOT_FOUND",
          "JOB_NOT_FOUND",
          "LEASE_NOT_FOUND",
          "LOCATION_NOT_ALLOWED",
          "NOT_OWNER",
          "STORAGE_ACCESS_DENIED",
          "STORAGE_UNAVAILABLE",
          "UNREADABLE_DATA",
          "RESOURCE_EXHAUSTED",
          "INTERNAL");

  private static ActorTestKit testKit;
  private static Serialization serialization;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
    serialization = SerializationExtension.get(testKit.system().classicSystem());
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void aFailureWrittenByAnEarlierNodeReadsWithItsKind() throws Exception {
    Failure today = new Failure(ErrorKind.INTERNAL, "m");
    Serializer serializer = serialization.findSerializerFor(today);
    for (String kind : EARLIER_KINDS) {
      ObjectNode earlier = CBOR.createObjectNode();
      earlier.put("kind", kind);
      earlier.put("message", "what was wrong");
      Failure read =
          (Failure)
              serialization
                  .deserialize(
                      CBOR.writeValueAsBytes(earlier),
                      serializer.identifier(),
                      Serializers.manifestFor(serializer, today))
                  .get();
      assertThat(read).isEqualTo(new Failure(ErrorKind.valueOf(kind), "what was wrong"));
    }
  }

  @Test
  void aFailureIsWrittenAsEarlierNodesReadIt() throws Exception {
    for (ErrorKind kind : ErrorKind.values()) {
      Failure failure = new Failure(kind, "what was wrong");
      ObjectNode written =
          (ObjectNode) CBOR.readTree(serialization.findSerializerFor(failure).toBinary(failure));
      assertThat(written.get("kind").asText()).isIn(EARLIER_KINDS).isEqualTo(kind.name());
      assertThat(written.get("message").asText()).isEqualTo("what was wrong");
    }
  }
}
