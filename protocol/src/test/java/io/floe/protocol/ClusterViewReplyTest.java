package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The answer to {@code cluster} round-trips with the field names docs/protocol.md gives. */
class ClusterViewReplyTest {
  @Test
  void aViewRoundTripsAsDocumented() {
    ClusterViewReply view =
        new ClusterViewReply(
            "pekko://floe@10.0.0.1:25520",
            List.of(
                new ClusterViewReply.Member(
                    "pekko://floe@10.0.0.1:25520", "Up", List.of("data", "dc-default")),
                new ClusterViewReply.Member("pekko://floe@10.0.0.2:25520", "Joining", List.of())),
            List.of("pekko://floe@10.0.0.3:25520"),
            1,
            2,
            "only 1 data nodes are Up",
            new ClusterViewReply.Memory(1_024, 1L << 30, 3));
    assertThat(ClusterViewReply.parse(view.encode())).isEqualTo(view);
    assertThat(view.membersUp()).isEqualTo(1);
    assertThat(new String(view.encode(), StandardCharsets.UTF_8))
        .contains("\"members\":[{\"address\":\"pekko://floe@10.0.0.1:25520\",\"status\":\"Up\",")
        .contains("\"unreachable\":[\"pekko://floe@10.0.0.3:25520\"],\"data_nodes_up\":1,")
        .contains("\"min_data_nodes\":2,\"warning\":\"only 1 data nodes are Up\",")
        .endsWith(
            "\"memory\":{\"arrow_allocated_bytes\":1024,\"arrow_limit_bytes\":1073741824,"
                + "\"slices_held\":3},\"protocol_version\":2}");
    assertThat(view.protocolVersion()).isEqualTo(ClusterViewReply.PROTOCOL_VERSION);
    // A node of before the version was answered speaks version 1.
    assertThat(
            ClusterViewReply.parse(
                    new String(view.encode(), StandardCharsets.UTF_8)
                        .replace(",\"protocol_version\":2", "")
                        .getBytes(StandardCharsets.UTF_8))
                .protocolVersion())
        .isEqualTo(1);
    ClusterViewReply calm =
        new ClusterViewReply(view.self(), view.members(), List.of(), 2, 2, null, view.memory());
    assertThat(ClusterViewReply.parse(calm.encode())).isEqualTo(calm);
    assertThat(new String(calm.encode(), StandardCharsets.UTF_8)).doesNotContain("warning");
  }
}
