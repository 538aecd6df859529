package io.floe.catalog;

import static io.floe.testing.IcebergTestTables.readAllGeneric;
import static io.floe.testing.IcebergTestTables.sortedById;
import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.iceberg.SliceReads;
import io.floe.spec.DatasetSpec;
import io.floe.table.CatalogSettings;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.S3TestServer;
import io.floe.testing.TestRows;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.Test;

/**
 * A table in a REST catalog served by Iceberg's REST catalog server as a process on 127.0.0.1, over
 * an S3 server that checks keys: Floe, holding no S3 keys of its own, reads it with the credentials
 * the catalog vends with the table, and is refused when the catalog vends none.
 */
class RestCatalogTablesTest {

  private static Map<String, String> backend(S3TestServer s3, boolean vend) {
    Map<String, String> properties = new HashMap<>(s3.fileIOProperties());
    properties.put("warehouse", s3.uri("rest"));
    properties.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    properties.put("include-credentials", String.valueOf(vend));
    return properties;
  }

  /** Floe's side: the catalog's address and how to reach S3, but no keys. */
  private static CatalogSettings floeCatalog(RestCatalogProcess server, S3TestServer s3) {
    Map<String, String> properties = new HashMap<>();
    properties.put("type", "rest");
    properties.put("uri", server.uri());
    properties.put("s3.endpoint", s3.endpoint().toString());
    properties.put("s3.path-style-access", "true");
    properties.put("client.region", s3.region());
    return CatalogSettings.builder().catalog("lake", properties).build();
  }

  private static IcebergTestTables.TestTable writeTable(
      RestCatalogProcess server, S3TestServer s3) {
    RESTCatalog writer = new RESTCatalog();
    Map<String, String> properties = new HashMap<>(s3.fileIOProperties());
    properties.put("uri", server.uri());
    writer.initialize("writer", properties);
    return IcebergTestTables.inCatalog(writer, "db")
        .create("events", TestRows.EVENTS)
        .appendFiles(2, 800, TestRows.events(9))
        .deletePositions(r -> (Long) r.getField("id") % 3 == 0);
  }

  @Test
  void readsWithTheCredentialsTheCatalogVends() throws Exception {
    try (S3TestServer s3 = S3TestServer.start();
        RestCatalogProcess server = RestCatalogProcess.start(backend(s3, true));
        BufferAllocator allocator = new RootAllocator()) {
      IcebergTestTables.TestTable table = writeTable(server, s3);
      try (TableAccess tables =
              new TableAccess(StorageSettings.defaults(), floeCatalog(server, s3));
          SliceReads reads = new SliceReads(tables, allocator, 1)) {
        assertSameRows(
            sortedById(reads.readAll(DatasetSpec.of("e", "lake.db.events"))),
            sortedById(readAllGeneric(table.table())));
        assertThatThrownBy(() -> reads.plan(DatasetSpec.of("e", "lake.db.nothing")))
            .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.NOT_FOUND))
            .hasMessageContaining("db.nothing");
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void withoutVendedCredentialsTheStoreRefusesTheNode() throws Exception {
    try (S3TestServer s3 = S3TestServer.start();
        RestCatalogProcess server = RestCatalogProcess.start(backend(s3, false));
        BufferAllocator allocator = new RootAllocator()) {
      writeTable(server, s3);
      try (TableAccess tables =
              new TableAccess(StorageSettings.defaults(), floeCatalog(server, s3));
          SliceReads reads = new SliceReads(tables, allocator, 1)) {
        assertThatThrownBy(() -> reads.readAll(DatasetSpec.of("e", "lake.db.events")))
            .satisfies(
                e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.STORAGE_ACCESS_DENIED))
            .hasMessageContaining("No AWS credentials");
      }
    }
  }

  @Test
  void anUnreachableCatalogSaysSo() throws Exception {
    try (S3TestServer s3 = S3TestServer.start()) {
      RestCatalogProcess server = RestCatalogProcess.start(backend(s3, true));
      CatalogSettings catalogs = floeCatalog(server, s3);
      server.close();
      try (TableAccess tables = new TableAccess(StorageSettings.defaults(), catalogs)) {
        assertThatThrownBy(() -> tables.open(tables.resolve("lake.db.events", null)))
            .satisfies(
                e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.STORAGE_UNAVAILABLE))
            .hasMessageContaining("catalog 'lake'");
      }
    }
  }
}
