package io.floe.testing;

import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergTestTables.TestTable;
import java.util.List;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;

class S3TestServerTest {
  @Test
  void icebergTableRoundTripsThroughS3() throws Exception {
    try (S3TestServer s3 = S3TestServer.start()) {
      assertThat(s3.endpoint().getHost()).isEqualTo("127.0.0.1");
      RowGenerator rows = TestRows.events(5);

      Catalog catalog = s3.catalog("warehouse");
      TestTable t =
          IcebergTestTables.inCatalog(catalog, "db")
              .create("events", TestRows.EVENTS)
              .appendFiles(2, 1_000, rows)
              .deletePositions(r -> (Long) r.getField("id") < 100);

      assertThat(t.metadataLocation()).startsWith("s3://" + s3.bucket() + "/warehouse/db/events/");
      assertThat(t.dataFiles())
          .hasSize(2)
          .allSatisfy(f -> assertThat(f.location()).startsWith("s3://" + s3.bucket()));

      // A fresh read of the metadata sees only what went over the wire.
      Table reloaded =
          new org.apache.iceberg.BaseTable(
              new org.apache.iceberg.StaticTableOperations(t.metadataLocation(), t.table().io()),
              "reloaded");
      List<Record> read = IcebergTestTables.sortedById(IcebergTestTables.readAllGeneric(reloaded));
      assertThat(read).hasSize(1_900);
      assertSameRows(read, TestRows.rows(rows, 100, 2_000));
    }
  }

  @Test
  void twoServersDoNotShareABucket() throws Exception {
    try (S3TestServer a = S3TestServer.start();
        S3TestServer b = S3TestServer.start()) {
      assertThat(a.bucket()).isNotEqualTo(b.bucket());
      assertThat(a.endpoint()).isNotEqualTo(b.endpoint());
    }
  }
}
