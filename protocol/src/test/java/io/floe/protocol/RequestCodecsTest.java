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
            30_000,
            true);
    assertThat(JobRequest.parse(Json.bytes(JobRequest.toJson(spec)))).isEqualTo(spec);
    assertThatThrownBy(
            () -> JobRequest.parse(json("{\"job\": \"j\", \"dataset\": \"d\", \"batch_rows\": 0}")))
        .hasMessageContaining("batch_rows");
  }

  @Test
  void descriptorsSayTheirKindAndAnUnknownKindIsRefused() {
    JobReadRequest jobRead = new JobReadRequest("train", 3, 4, 2, 1, 99L, 2);
    var jobCommand = Json.parseObject(jobRead.toJson(), "command");
    assertThat(JobReadRequest.isJobCommand(jobCommand)).isTrue();
    assertThat(JobReadRequest.parse(jobCommand)).isEqualTo(jobRead);

    ReadRequest shard = new ReadRequest("events", 1, 4);
    var shardCommand = Json.parseObject(shard.toJson(), "command");
    assertThat(JobReadRequest.isJobCommand(shardCommand)).isFalse();
    assertThat(ReadRequest.parse(shardCommand)).isEqualTo(shard);

    var unknown = Json.parseObject(json("{\"kind\": \"sql\", \"dataset\": \"events\"}"), "command");
    assertThatThrownBy(() -> JobReadRequest.isJobCommand(unknown))
        .hasMessageContaining("Unknown kind 'sql'");
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
}
