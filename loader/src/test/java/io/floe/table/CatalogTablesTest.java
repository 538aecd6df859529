package io.floe.table;

import static io.floe.testing.IcebergTestTables.readAllGeneric;
import static io.floe.testing.IcebergTestTables.sortedById;
import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.iceberg.SliceReads;
import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.S3TestServer;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tables named by their identifier in a configured catalog, built with Iceberg's CatalogUtil from
 * Iceberg's own property names: a JDBC catalog in a SQLite file over S3, and a Hadoop catalog in a
 * local warehouse. The rows equal Iceberg's generic read; errors name the catalog and table.
 */
class CatalogTablesTest {
  @TempDir Path dir;

  @Test
  void jdbcCatalogTablesOnS3LoadByIdentifierEitherWay() throws Exception {
    try (S3TestServer s3 = S3TestServer.start();
        BufferAllocator allocator = new RootAllocator()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.inCatalog(s3.catalog("warehouse"), "db")
              .create("events", TestRows.EVENTS)
              .appendFiles(2, 1_000, TestRows.events(3))
              .deletePositions(r -> (Long) r.getField("id") % 7 == 0);
      Map<String, String> lake = new HashMap<>(s3.fileIOProperties());
      lake.put("type", "jdbc");
      lake.put("uri", s3.jdbcUri());
      lake.put("warehouse", s3.uri("warehouse"));
      // A JDBC catalog keeps its tables under its name: the writer's was "s3-test".
      CatalogSettings catalogs = CatalogSettings.builder().catalog("s3-test", lake).build();

      try (TableAccess tables = new TableAccess(StorageSettings.defaults(), catalogs);
          SliceReads reads = new SliceReads(tables, allocator, 1)) {
        assertThat(tables.resolve("s3-test.db.events", null))
            .isEqualTo(new TableSource.InCatalog("s3-test", "db.events"));
        List<Record> expected = sortedById(readAllGeneric(table.table()));
        assertSameRows(
            sortedById(reads.readAll(DatasetSpec.of("e", "s3-test.db.events"))), expected);
        assertSameRows(
            sortedById(reads.readAll(DatasetSpec.inCatalog("e", "s3-test", "db.events"))),
            expected);
        assertThat(reads.plan(DatasetSpec.of("e", "s3-test.db.events")).source())
            .isEqualTo(new TableSource.InCatalog("s3-test", "db.events"));

        assertThatThrownBy(() -> reads.plan(DatasetSpec.of("e", "s3-test.db.missing")))
            .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.NOT_FOUND))
            .hasMessageContaining("db.missing")
            .hasMessageContaining("catalog 's3-test'");
        assertThatThrownBy(() -> reads.plan(DatasetSpec.inCatalog("e", "nope", "db.events")))
            .satisfies(
                e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.INVALID_ARGUMENT))
            .hasMessageContaining("No catalog 'nope'")
            .hasMessageContaining("configured catalogs: s3-test");
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void hadoopCatalogTablesLoadByIdentifier() throws Exception {
    String warehouse = dir.resolve("warehouse").toUri().toString();
    try (HadoopCatalog writer =
            new HadoopCatalog(new org.apache.hadoop.conf.Configuration(), warehouse);
        BufferAllocator allocator = new RootAllocator()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.inCatalog(writer, "db")
              .create("all_types", TestRows.ALL_TYPES)
              .appendFiles(2, 300, TestRows.allTypes(11));
      CatalogSettings catalogs =
          CatalogSettings.builder()
              .catalog("hl", Map.of("type", "hadoop", "warehouse", warehouse))
              .build();
      try (TableAccess tables = new TableAccess(StorageSettings.defaults(), catalogs);
          SliceReads reads = new SliceReads(tables, allocator, 1)) {
        assertSameRows(
            sortedById(reads.readAll(DatasetSpec.of("h", "hl.db.all_types"))),
            sortedById(readAllGeneric(table.table())));
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void hiveAndNessieCatalogsAreBuiltAndSayWhenTheyCannotBeReached() {
    CatalogSettings catalogs =
        CatalogSettings.builder()
            .catalog(
                "hms",
                Map.of("type", "hive", "uri", "thrift://127.0.0.1:1", "warehouse", "file:/tmp/w"))
            .catalog(
                "nes",
                Map.of(
                    "type",
                    "nessie",
                    "uri",
                    "http://127.0.0.1:1/api/v2",
                    "ref",
                    "main",
                    "warehouse",
                    "file:/tmp/w"))
            .build();
    StorageSettings storage =
        StorageSettings.builder().hadoopProperty("hive.metastore.connect.retries", "1").build();
    try (TableAccess tables = new TableAccess(storage, catalogs)) {
      for (String table : new String[] {"hms.db.t", "nes.db.t"}) {
        assertThatThrownBy(() -> tables.open(tables.resolve(table, null)))
            .satisfies(
                e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.STORAGE_UNAVAILABLE))
            .hasMessageContaining("catalog '" + table.substring(0, 3) + "'");
      }
    }
  }

  @Test
  void catalogsComeFromConfigurationAndTheEnvironmentWithIcebergNames() {
    CatalogSettings settings =
        CatalogSettings.fromConfig(
            ConfigFactory.parseString(
                "lake { type = rest, uri = \"http://127.0.0.1:1\", s3.path-style-access = true,"
                    + " \"s3.secret-access-key\" = hush }"),
            Map.of(
                "FLOE_CATALOG__LAKE__URI", "http://127.0.0.1:2",
                "FLOE_CATALOG__PG__TYPE", "jdbc",
                "FLOE_CATALOG__PG__JDBC__USER", "floe",
                "OTHER", "x"));

    assertThat(settings.names()).containsExactly("lake", "pg");
    assertThat(settings.properties("lake").orElseThrow())
        .containsEntry("uri", "http://127.0.0.1:2")
        .containsEntry("s3.path-style-access", "true")
        .containsEntry("s3.secret-access-key", "hush");
    assertThat(settings.properties("pg").orElseThrow()).containsEntry("jdbc.user", "floe");
    assertThat(settings.toString()).doesNotContain("hush");
    assertThatThrownBy(
            () -> CatalogSettings.fromConfig(ConfigFactory.parseString("x { uri = y }"), Map.of()))
        .hasMessageContaining("Catalog 'x' in floe.catalogs has no 'type'");
  }

  @Test
  void storagePropertiesComeFromConfigurationAndTheEnvironmentWithIcebergNames() {
    StorageSettings settings =
        StorageSettings.fromConfig(
            ConfigFactory.parseString(
                "s3 { endpoint = \"http://127.0.0.1:9000\", region = eu-west-1,"
                    + " access-key = a, secret-key = hush }, properties { s3.sse.type = s3 }"),
            Map.of("FLOE_STORAGE__S3__PATH_STYLE_ACCESS", "true"));

    assertThat(settings.properties())
        .containsEntry("s3.endpoint", "http://127.0.0.1:9000")
        .containsEntry("client.region", "eu-west-1")
        .containsEntry("s3.access-key-id", "a")
        .containsEntry("s3.secret-access-key", "hush")
        .containsEntry("s3.sse.type", "s3")
        .containsEntry("s3.path-style-access", "true");
    assertThat(settings.toString()).doesNotContain("hush");
  }

  @Test
  void aTableInACatalogThatIsNotConfiguredIsRefusedNamingTheConfiguredOnes() {
    CatalogSettings catalogs =
        CatalogSettings.builder()
            .catalog("hl", Map.of("type", "hadoop", "warehouse", dir.toUri().toString()))
            .build();
    try (TableAccess tables = new TableAccess(StorageSettings.defaults(), catalogs)) {
      assertThatThrownBy(() -> tables.resolve("other.db.nosuch", null))
          .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.INVALID_ARGUMENT))
          .hasMessageContaining("No catalog 'other' for table 'other.db.nosuch'")
          .hasMessageContaining("configured catalogs: hl");
      // Two words are a file name as often as a table: db.table stays a location.
      assertThat(tables.resolve("events.json2", null)).isInstanceOf(TableSource.AtLocation.class);
    }
  }

  @Test
  void unsupportedSchemesAreRefusedNamingTheOnesThatWork() {
    try (TableAccess tables = new TableAccess(StorageSettings.defaults())) {
      for (String location :
          new String[] {"http://127.0.0.1:1/t", "hdfs://nn/t", "ftp://x/t", "unknownscheme://x"}) {
        assertThatThrownBy(() -> tables.open(tables.resolve(location, null)))
            .satisfies(
                e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.INVALID_ARGUMENT))
            .hasMessageContaining("Unsupported location '" + location)
            .hasMessageContaining("s3://, s3a://, s3n://, gs://, abfs://");
      }
    }
  }
}
