package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every answer to {@code lease} and {@code ack} round-trips in the form docs/protocol.md shows. */
class LeaseAndAckReplyTest {
  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  @Test
  void leaseAnswersRoundTripAsDocumented() {
    LeaseReply leased = new LeaseReply.Leased("0:17:1:5f3a9c1e", 0, 17, 256);
    LeaseReply wait = new LeaseReply.Wait(200);
    LeaseReply done = new LeaseReply.Done();
    for (LeaseReply reply : List.of(leased, wait, done)) {
      assertThat(LeaseReply.parse(reply.encode())).isEqualTo(reply);
    }
    assertThat(text(leased.encode()))
        .isEqualTo(
            "{\"status\":\"leased\",\"lease\":\"0:17:1:5f3a9c1e\",\"epoch\":0,\"batch\":17,"
                + "\"rows\":256}");
    assertThat(text(wait.encode())).isEqualTo("{\"status\":\"wait\",\"retry_ms\":200}");
    assertThat(text(done.encode())).isEqualTo("{\"status\":\"done\"}");
    assertThatThrownBy(
            () -> LeaseReply.parse("{\"status\":\"later\"}".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("Unknown status 'later' in lease answer");
  }

  @Test
  void ackAnswersRoundTripAsDocumented() {
    for (AckReply reply : AckReply.values()) {
      assertThat(AckReply.parse(reply.encode())).isEqualTo(reply);
    }
    assertThat(text(AckReply.EXPIRED.encode())).isEqualTo("{\"status\":\"expired\"}");
    assertThatThrownBy(
            () -> AckReply.parse("{\"status\":\"ACKNOWLEDGED\"}".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("Unknown status 'ACKNOWLEDGED' in ack answer");
  }
}
