package io.floe.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code floe.storage.object-store}: parallel requests and range size from the configuration, the
 * defaults when it names neither (as the node's application.conf does without its variables), and
 * values out of range refused with the value in the message.
 */
class ObjectStoreReadSettingsTest {

  @Test
  void readFromTheObjectStoreBlock() {
    StorageSettings settings =
        StorageSettings.fromConfig(
            ConfigFactory.parseString("object-store { parallel-requests = 4, range-size = 2MiB }"),
            Map.of());
    assertThat(settings.parallelRequests()).isEqualTo(4);
    assertThat(settings.rangeSize()).isEqualTo(2L << 20);
  }

  @Test
  void defaultsWhenUnset() {
    StorageSettings settings =
        StorageSettings.fromConfig(ConfigFactory.parseString("object-store {}"), Map.of());
    assertThat(settings.parallelRequests()).isEqualTo(StorageSettings.PARALLEL_REQUESTS_DEFAULT);
    assertThat(settings.rangeSize()).isEqualTo(StorageSettings.RANGE_SIZE_DEFAULT);
    assertThat(StorageSettings.defaults().parallelRequests()).isEqualTo(16);
    assertThat(StorageSettings.defaults().rangeSize()).isEqualTo(8L << 20);
  }

  @Test
  void zeroTurnsParallelReadsOffAndValuesOutOfRangeAreRefused() {
    StorageSettings off =
        StorageSettings.fromConfig(
            ConfigFactory.parseString("object-store.parallel-requests = 0"), Map.of());
    try (ParallelReads reads = ParallelReads.of(off.parallelRequests(), off.rangeSize())) {
      assertThat(reads.toString()).isEqualTo("one request at a time");
    }
    assertThatThrownBy(
            () ->
                StorageSettings.fromConfig(
                    ConfigFactory.parseString("object-store.parallel-requests = -1"), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
    assertThatThrownBy(
            () ->
                StorageSettings.fromConfig(
                    ConfigFactory.parseString("object-store.range-size = 1KiB"), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1024");
  }
}
