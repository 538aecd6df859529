package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.JobCheckpoint;
import io.floe.client.JobOptions;
import io.floe.job.JobMode;
import io.floe.job.TailPolicy;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The Java client's job options say on the wire only what was set, so the server's defaults apply
 * to the rest; a checkpoint survives being written out and read back.
 */
class JobOptionsTest {
  private static String json(JobOptions options) {
    return new String(options.toJson(), StandardCharsets.UTF_8);
  }

  @Test
  void unsetOptionalFieldsAreLeftOut() {
    JobOptions options = JobOptions.builder("resnet-a", "clicks", 256).build();
    assertThat(json(options))
        .isEqualTo("{\"job\":\"resnet-a\",\"dataset\":\"clicks\",\"batch_rows\":256}");
    assertThat(options.seed()).isZero();
    assertThat(options.shuffled()).isTrue();
    assertThat(options.mode()).isEqualTo(JobMode.DETERMINISTIC);
    assertThat(options.tail()).isEqualTo(TailPolicy.DROP);
    assertThat(options.blockRows()).isEqualTo(4096);
    assertThat(options.windowBlocks()).isEqualTo(16);
    assertThat(options.runRows()).isEqualTo(1);
    assertThat(options.leaseTimeoutMs()).isEqualTo(30_000);
    assertThat(options.columns()).isEmpty();
  }

  @Test
  void everySetFieldIsSentUnderItsWireName() {
    JobOptions options =
        JobOptions.builder("resnet-a", "clicks", 256)
            .seed(7)
            .globalOrder()
            .mode(JobMode.DYNAMIC)
            .columns("x", "id")
            .tail(TailPolicy.PAD)
            .blockRows(1024)
            .windowBlocks(8)
            .runRows(16)
            .leaseTimeoutMs(500)
            .build();
    assertThat(json(options))
        .isEqualTo(
            "{\"job\":\"resnet-a\",\"dataset\":\"clicks\",\"mode\":\"dynamic\",\"seed\":7,"
                + "\"shuffle\":false,\"columns\":[\"x\",\"id\"],\"batch_rows\":256,"
                + "\"tail\":\"pad\",\"block_rows\":1024,\"window_blocks\":8,\"run_rows\":16,"
                + "\"lease_timeout_ms\":500}");
    assertThat(options.toBuilder().build()).isEqualTo(options).hasSameHashCodeAs(options);
    assertThat(options.toBuilder().seed(8).build()).isNotEqualTo(options);
    assertThat(options.toBuilder().runRows(8).build()).isNotEqualTo(options);
  }

  @Test
  void outOfRangeSettingsAreRefusedWithTheValue() {
    assertThatThrownBy(() -> JobOptions.builder("a b", "clicks", 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a b'");
    assertThatThrownBy(() -> JobOptions.builder("a", "clicks", 0))
        .hasMessageContaining("batch_rows: 0");
    assertThatThrownBy(() -> JobOptions.builder("a", "clicks", 1).windowBlocks(4097))
        .hasMessageContaining("window_blocks: 4097");
    assertThatThrownBy(() -> JobOptions.builder("a", "clicks", 1).runRows(0))
        .hasMessageContaining("run_rows: 0");
    assertThatThrownBy(() -> JobOptions.builder("a", "clicks", 1).leaseTimeoutMs(99))
        .hasMessageContaining("lease_timeout_ms: 99");
  }

  @Test
  void aCheckpointReadsBackAsWritten() {
    JobCheckpoint checkpoint = new JobCheckpoint("resnet-a", 3, 1200, "3f9a0c2e", 7, 256);
    assertThat(JobCheckpoint.fromJson(checkpoint.toJson())).isEqualTo(checkpoint);
    assertThat(checkpoint.advance(5).batchesConsumed()).isEqualTo(1205);
    assertThat(checkpoint.nextEpoch())
        .isEqualTo(new JobCheckpoint("resnet-a", 4, 0, "3f9a0c2e", 7, 256));
  }
}
