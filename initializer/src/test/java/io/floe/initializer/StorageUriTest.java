package io.floe.initializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StorageUriTest {
  private static final String METADATA =
      "s3a://bucket/warehouse/db/events/metadata/00002-a.metadata.json";

  @Test
  void floeUrisNameACatalogTable() {
    assertThat(StorageUri.parse("floe://lake.db.events").table()).isEqualTo("lake.db.events");
    assertThat(StorageUri.parse(" floe://lake.events ").table()).isEqualTo("lake.events");
    assertThat(StorageUri.parse("floe://lake.db.events").catalog()).isNull();
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
  void aCacheUriOpensItsMetadataLocationAsKubeflowsCacheDoes() {
    StorageUri uri = StorageUri.resolve("cache://db/events", METADATA, null);
    assertThat(uri.table()).isEqualTo(METADATA);
    assertThat(uri.catalog()).isNull();
    // METADATA_LOC wins over FLOE_CATALOG: it is what the SDK call named.
    assertThat(StorageUri.resolve("cache://db/events", " " + METADATA, "lake"))
        .isEqualTo(new StorageUri(METADATA, null));
  }

  @Test
  void withoutAMetadataLocationACacheUriIsLookedUpInFloeCatalog() {
    assertThat(StorageUri.resolve("cache://analytics/events", null, "lake"))
        .isEqualTo(new StorageUri("analytics.events", "lake"));
    assertThat(StorageUri.resolve("cache://a.b/events", "", "lake"))
        .isEqualTo(new StorageUri("a.b.events", "lake"));
  }

  @Test
  void aCacheUriWithNeitherSaysWhatToSet() {
    assertThatThrownBy(() -> StorageUri.resolve("cache://db/events", null, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cache://db/events names no table")
        .hasMessageContaining("METADATA_LOC")
        .hasMessageContaining("FLOE_CATALOG")
        .hasMessageContaining("db.events");
  }

  @Test
  void aMetadataLocationThatIsNoLocationIsRefusedByName() {
    assertThatThrownBy(() -> StorageUri.resolve("cache://db/events", "events.metadata.json", null))
        .hasMessageContaining("Invalid METADATA_LOC 'events.metadata.json'")
        .hasMessageContaining("cache://db/events");
  }

  @Test
  void aMetadataLocationBesideAnotherUriIsRefused() {
    assertThatThrownBy(() -> StorageUri.resolve("floe://lake.db.events", METADATA, null))
        .hasMessageContaining("METADATA_LOC is read with a cache://<schema>/<table> storage URI")
        .hasMessageContaining("floe://lake.db.events");
  }

  @Test
  void aCatalogThatCannotBeANameIsRefusedByName() {
    assertThatThrownBy(() -> StorageUri.resolve("cache://db/events", null, "lake.db"))
        .hasMessageContaining("Invalid FLOE_CATALOG 'lake.db'");
  }

  @Test
  void aDottedTableInACatalogIsRefused() {
    assertThatThrownBy(() -> StorageUri.resolve("cache://db/ev.ents", null, "lake"))
        .hasMessageContaining("Table 'ev.ents'")
        .hasMessageContaining("METADATA_LOC");
  }

  @Test
  void otherSchemesAreRefusedByName() {
    assertThatThrownBy(() -> StorageUri.parse("hf://tatsu-lab/alpaca"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hf://tatsu-lab/alpaca")
        .hasMessageContaining("floe://<catalog>.<db>.<table>")
        .hasMessageContaining("cache://<schema>/<table>");
    assertThatThrownBy(() -> StorageUri.parse("floe://events"))
        .hasMessageContaining("floe:// takes <catalog>.<db>.<table>");
    assertThatThrownBy(() -> StorageUri.parse("")).hasMessageContaining("STORAGE_URI");
    assertThatThrownBy(() -> StorageUri.parse("cache://db"))
        .hasMessageContaining("no table after schema 'db'");
  }
}
