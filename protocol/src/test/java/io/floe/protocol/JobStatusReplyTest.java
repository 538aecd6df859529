package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.job.EpochProgress;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.TailPolicy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A job status the node encodes is read back by the clients' codec as the same value, with the
 * field names docs/protocol.md gives.
 */
class JobStatusReplyTest {
  private static final JobSpec SPEC =
      new JobSpec(
          "resnet-a",
          "clicks",
          7,
          true,
          JobMode.DYNAMIC,
          List.of("id", "x"),
          256,
          TailPolicy.DROP,
          4096,
          16,
          1,
          30_000,
          false);

  private static final JobStatusReply STATUS =
      new JobStatusReply(
          SPEC,
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
          new io.floe.tenant.Owner("team-a", "system:serviceaccount:team-a:trainer"));

  @Test
  void everyFieldRoundTrips() {
    assertThat(JobStatusReply.parse(STATUS.encode())).isEqualTo(STATUS);
    assertThat(JobStatusReply.parse(STATUS.asDropped().encode())).isEqualTo(STATUS.asDropped());
    assertThat(
            JobStatusReply.parseList(
                JobStatusReply.encodeList(List.of(STATUS, STATUS.asDropped()))))
        .containsExactly(STATUS, STATUS.asDropped());
    assertThat(STATUS.job()).isEqualTo("resnet-a");
    assertThat(STATUS.mode()).isEqualTo(JobMode.DYNAMIC);
  }

  @Test
  void theWireHasTheDocumentedNames() {
    assertThat(new String(STATUS.encode(), StandardCharsets.UTF_8))
        .startsWith("{\"job\":\"resnet-a\",\"dataset\":\"clicks\",\"mode\":\"dynamic\",\"seed\":7,")
        .contains("\"epoch\":3,\"rows\":1000000,\"snapshot_id\":74041299805,")
        .contains("\"layout\":\"3f9a0c2e5b7d1e44\",\"batches_per_epoch\":3906,")
        .contains("\"layouts\":[{\"from_epoch\":0,\"layout\":\"77c1d0a9e3b2f456\",")
        .contains(
            "\"counters\":{\"rows_leased\":512,\"rows_acknowledged\":256,\"rows_reissued\":0,"
                + "\"leases_active\":1}")
        .contains(
            "\"epochs\":[{\"epoch\":0,\"batches\":3906,\"pending\":3000,\"leased\":6,"
                + "\"acknowledged\":900}]")
        .doesNotContain("dropped");
  }

  @Test
  void aNewerNodesFieldsAreLeftAloneAndMissingOnesNamed() {
    String encoded = new String(STATUS.encode(), StandardCharsets.UTF_8);
    byte[] newer =
        encoded.replace("{\"job\"", "{\"priority\":2,\"job\"").getBytes(StandardCharsets.UTF_8);
    assertThat(JobStatusReply.parse(newer)).isEqualTo(STATUS);
    byte[] noCounters =
        encoded.replaceAll(",\"counters\":\\{[^}]*}", "").getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> JobStatusReply.parse(noCounters))
        .hasMessageContaining("Missing field 'counters' in job status");
  }
}
