package io.floe.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import io.floe.job.JobMode;
import io.floe.job.JobRecord;
import io.floe.job.JobSpec;
import io.floe.job.PinnedLayout;
import io.floe.job.TailPolicy;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Owner;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Dataset and job records persisted (floe.state.dir) or replicated by a node from before owners
 * were kept have no {@code owner}: Pekko's serializer still reads them, as records without an
 * owner, which the entities treat as the default tenant's ({@link Owner#LEGACY}). Records with an
 * owner keep it across nodes.
 */
class OwnerlessRecordsTest {
  private static final ObjectMapper CBOR = new ObjectMapper(new CBORFactory());

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

  /** {@code record} as the node of an earlier version wrote it: the same, with no owner field. */
  @SuppressWarnings("unchecked")
  private static <T> T writtenWithoutOwner(T record) throws Exception {
    Serializer serializer = serialization.findSerializerFor(record);
    ObjectNode fields = (ObjectNode) CBOR.readTree(serializer.toBinary(record));
    assertThat(fields.has("owner")).as("today's record has an owner").isTrue();
    fields.remove("owner");
    return (T)
        serialization
            .deserialize(
                CBOR.writeValueAsBytes(fields),
                serializer.identifier(),
                Serializers.manifestFor(serializer, record))
            .get();
  }

  private static <T> T roundTrip(T record) {
    Serializer serializer = serialization.findSerializerFor(record);
    @SuppressWarnings("unchecked")
    T read =
        (T)
            serialization
                .deserialize(
                    serializer.toBinary(record),
                    serializer.identifier(),
                    Serializers.manifestFor(serializer, record))
                .get();
    return read;
  }

  @Test
  void aDatasetRecordWithoutAnOwnerIsReadAsOneOfNoOwner() throws Exception {
    Owner owner = new Owner("team-a", "ops");
    DatasetRecord record =
        new DatasetRecord(
            DatasetSpec.of("events", "/data/events"),
            7,
            42,
            List.of(41L),
            Map.of("job", List.of("f1")),
            List.of(),
            owner);
    assertThat(roundTrip(record)).isEqualTo(record);
    DatasetRecord old = writtenWithoutOwner(record);
    assertThat(old.owner()).isNull();
    assertThat(old.spec()).isEqualTo(record.spec());
    assertThat(old.holders()).isEqualTo(record.holders());
    assertThat(Owner.orLegacy(old.owner()).tenant()).isEqualTo(Owner.DEFAULT_TENANT);
  }

  @Test
  void aJobRecordWithoutAnOwnerIsReadAsOneOfNoOwner() throws Exception {
    JobSpec spec =
        new JobSpec(
            "j",
            "events",
            7,
            true,
            JobMode.DYNAMIC,
            List.of("id"),
            64,
            TailPolicy.PAD,
            JobSpec.BLOCK_ROWS_DEFAULT,
            JobSpec.WINDOW_BLOCKS_DEFAULT,
            1,
            JobSpec.LEASE_TIMEOUT_MILLIS_DEFAULT,
            false);
    JobRecord record =
        new JobRecord(
            spec,
            new PinnedLayout(42, "f1", 1_000),
            List.of(),
            List.of(),
            3,
            new Owner("team-a", "trainer"));
    assertThat(roundTrip(record).owner()).isEqualTo(record.owner());
    JobRecord old = writtenWithoutOwner(record);
    assertThat(old.owner()).isNull();
    assertThat(old.spec()).isEqualTo(spec);
    assertThat(old.boundThrough()).isEqualTo(3);
  }
}
