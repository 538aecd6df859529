package io.floe.iceberg;

import static io.floe.testing.IcebergTestTables.readAllGeneric;
import static io.floe.testing.IcebergTestTables.sortedById;
import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.dataset.DatasetSpec;
import io.floe.dataset.FailureKind;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.S3TestServer;
import io.floe.testing.SliceReads;
import io.floe.testing.TestRows;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;

/** A table on s3a:// in an S3-compatible server on 127.0.0.1 loads like a local one. */
class S3TableLoadingTest {

  private static StorageSettings settings(S3TestServer s3, String secret) {
    return StorageSettings.builder()
        .s3Endpoint(s3.endpoint().toString())
        .s3Region(s3.region())
        .s3PathStyleAccess(true)
        .s3Credentials(s3.accessKey(), secret)
        .hadoopProperty("fs.s3a.attempts.maximum", "1")
        .hadoopProperty("fs.s3a.retry.limit", "1")
        .build();
  }

  @Test
  void s3aTableWithDeletesMatchesGenericRead() throws Exception {
    try (S3TestServer s3 = S3TestServer.start();
        BufferAllocator allocator = new RootAllocator()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.at(s3.uri("warehouse"), s3.hadoopConfiguration())
              .create("events", TestRows.EVENTS)
              .appendFiles(2, 1_500, TestRows.events(6))
              .deletePositions(r -> (Long) r.getField("id") % 5 == 0);
      assertThat(table.metadataLocation()).startsWith("s3a://");

      StorageSettings storage = settings(s3, s3.secretKey());
      assertThat(storage.toString()).doesNotContain(s3.secretKey()).contains("hidden");
      try (TableOpener tables = new TableOpener(storage);
          SliceReads reads = new SliceReads(tables, allocator, 1)) {
        DatasetSpec spec = DatasetSpec.of("s3", table.metadataLocation());
        assertSameRows(sortedById(reads.readAll(spec)), sortedById(readAllGeneric(table.table())));
        assertThat(reads.plan(spec).slices().size()).isGreaterThan(2);
        // A table directory (no metadata file named) resolves through version-hint.text.
        assertThat(reads.readAll(DatasetSpec.of("s3", table.location()))).hasSize(2_400);
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void wrongCredentialsAndMissingTablesSayWhatWasWrong() throws Exception {
    try (S3TestServer s3 = S3TestServer.start()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.at(s3.uri("warehouse"), s3.hadoopConfiguration())
              .create("events", TestRows.EVENTS)
              .appendFiles(1, 100, TestRows.events(6));
      // Hadoop caches one filesystem per bucket per JVM, whatever its credentials; a node has one
      // storage configuration, but this test has two, so it empties the cache between them.
      FileSystem.closeAll();
      try (TableOpener wrong = new TableOpener(settings(s3, "not-the-secret"))) {
        assertThatThrownBy(() -> wrong.open(table.metadataLocation()))
            .satisfies(
                e -> assertThat(FailureKind.of(e)).isEqualTo(FailureKind.STORAGE_ACCESS_DENIED))
            .hasMessageContaining(s3.bucket());
      }
      FileSystem.closeAll();
      try (TableOpener tables = new TableOpener(settings(s3, s3.secretKey()))) {
        assertThatThrownBy(() -> tables.open(s3.uri("warehouse/nothing-here")))
            .satisfies(e -> assertThat(FailureKind.of(e)).isEqualTo(FailureKind.NOT_FOUND))
            .hasMessageContaining("nothing-here");
      }
    }
  }
}
