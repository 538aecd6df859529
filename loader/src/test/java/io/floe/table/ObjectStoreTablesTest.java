package io.floe.table;

import static io.floe.testing.IcebergTestTables.readAllGeneric;
import static io.floe.testing.IcebergTestTables.sortedById;
import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.iceberg.SliceReads;
import io.floe.spec.DatasetSpec;
import io.floe.testing.AzuriteServer;
import io.floe.testing.FakeGcsServer;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tables on Google Cloud Storage ({@code gs://}, fake-gcs-server) and Azure Data Lake Storage
 * ({@code abfs://}, Azurite) on 127.0.0.1, written through Iceberg's own FileIOs with those schemes
 * in every path, load by metadata location like local ones; refused keys and missing objects say
 * so.
 */
class ObjectStoreTablesTest {
  @TempDir Path dir;

  /** A JDBC catalog (SQLite) writing its tables through {@code ioImpl} under {@code warehouse}. */
  private JdbcCatalog writer(Map<String, String> io, String ioImpl, String warehouse) {
    Map<String, String> properties = new HashMap<>(io);
    properties.put(CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("writer.db"));
    properties.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse);
    properties.put(CatalogProperties.FILE_IO_IMPL, ioImpl);
    JdbcCatalog catalog = new JdbcCatalog();
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    catalog.initialize("writer", properties);
    return catalog;
  }

  private static StorageSettings storage(Map<String, String> properties) {
    StorageSettings.Builder builder = StorageSettings.builder();
    properties.forEach(builder::property);
    return builder.build();
  }

  @Test
  void gcsTablesLoadByMetadataLocation() throws Exception {
    try (FakeGcsServer gcs = FakeGcsServer.start();
        JdbcCatalog catalog =
            writer(
                gcs.fileIOProperties(),
                "org.apache.iceberg.gcp.gcs.GCSFileIO",
                gcs.uri("warehouse"));
        BufferAllocator allocator = new RootAllocator()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.inCatalog(catalog, "db")
              .create("events", TestRows.EVENTS)
              .appendFiles(2, 700, TestRows.events(5))
              .deletePositions(r -> (Long) r.getField("id") % 4 == 0);
      assertThat(table.metadataLocation()).startsWith("gs://");
      try (TableAccess tables = new TableAccess(storage(gcs.fileIOProperties()));
          SliceReads reads = new SliceReads(tables, allocator, 1)) {
        assertSameRows(
            sortedById(reads.readAll(DatasetSpec.of("g", table.metadataLocation()))),
            sortedById(readAllGeneric(table.table())));
        String missing = gcs.uri("warehouse/db/none/metadata/v1.metadata.json");
        assertThatThrownBy(() -> tables.open(tables.resolve(missing, null)))
            .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.NOT_FOUND))
            .hasMessageContaining(missing);
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void adlsTablesLoadByMetadataLocationAndRefusedKeysSaySo() throws Exception {
    try (AzuriteServer azure = AzuriteServer.start();
        JdbcCatalog catalog =
            writer(
                azure.fileIOProperties(AzuriteServer.KEY),
                "org.apache.iceberg.azure.adlsv2.ADLSFileIO",
                azure.uri("warehouse"));
        BufferAllocator allocator = new RootAllocator()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.inCatalog(catalog, "db")
              .create("events", TestRows.EVENTS)
              .appendFiles(2, 700, TestRows.events(6));
      assertThat(table.metadataLocation()).startsWith("abfs://");
      try (TableAccess tables =
              new TableAccess(storage(azure.fileIOProperties(AzuriteServer.KEY)));
          SliceReads reads = new SliceReads(tables, allocator, 1)) {
        assertSameRows(
            sortedById(reads.readAll(DatasetSpec.of("a", table.metadataLocation()))),
            sortedById(readAllGeneric(table.table())));
      }
      String wrongKey = java.util.Base64.getEncoder().encodeToString(new byte[64]);
      try (TableAccess wrong = new TableAccess(storage(azure.fileIOProperties(wrongKey)))) {
        assertThatThrownBy(() -> wrong.open(wrong.resolve(table.metadataLocation(), null)))
            .satisfies(
                e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.STORAGE_ACCESS_DENIED))
            .hasMessageContaining("Azure Storage refused the node's credentials")
            .hasMessageContaining(table.metadataLocation());
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }
}
