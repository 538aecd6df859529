package io.floe.initializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StorageUriTest {
  @Test
  void floeUrisNameACatalogTable() {
    assertThat(StorageUri.parse("floe://lake.db.events").table()).isEqualTo("lake.db.events");
    assertThat(StorageUri.parse(" floe://lake.events ").table()).isEqualTo("lake.events");
  }

  @Test
  void locationsPassThrough() {
    for (String location :
        new String[] {
          "s3://bucket/warehouse/db/events/metadata/00002-a.metadata.json",
          "gs://bucket/db/events",
          "abfss://c@account.dfs.core.windows.net/db/events",
          "file:/data/events",
          "/data/events"
        }) {
      assertThat(StorageUri.parse(location).table()).isEqualTo(location);
    }
  }

  @Test
  void otherSchemesAreRefusedByName() {
    assertThatThrownBy(() -> StorageUri.parse("hf://tatsu-lab/alpaca"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hf://tatsu-lab/alpaca")
        .hasMessageContaining("floe://<catalog>.<db>.<table>");
    assertThatThrownBy(() -> StorageUri.parse("floe://events"))
        .hasMessageContaining("floe:// takes <catalog>.<db>.<table>");
    assertThatThrownBy(() -> StorageUri.parse("")).hasMessageContaining("STORAGE_URI");
  }
}
