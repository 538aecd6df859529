package io.floe.iceberg;

import static io.floe.testing.IcebergTestTables.readAllGeneric;
import static io.floe.testing.IcebergTestTables.sortedById;
import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.spec.DatasetSpec;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.S3TestServer;
import io.floe.testing.TestRows;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * A table written with {@code s3://} in every path (as PyIceberg, Spark and Trino write them) to an
 * S3-compatible server on 127.0.0.1 loads like a local one, given as {@code s3://}, {@code s3a://}
 * or {@code s3n://}; refused credentials and missing buckets or objects say what was wrong.
 */
class S3TableLoadingTest {

  private static StorageSettings settings(S3TestServer s3, String secret) {
    StorageSettings.Builder builder = StorageSettings.builder();
    s3.fileIOProperties(secret).forEach(builder::property);
    return builder.build();
  }

  @Test
  void s3TableWithDeletesMatchesGenericReadUnderEveryS3Scheme() throws Exception {
    try (S3TestServer s3 = S3TestServer.start();
        BufferAllocator allocator = new RootAllocator()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.inCatalog(s3.catalog("warehouse"), "db")
              .create("events", TestRows.EVENTS)
              .appendFiles(2, 1_500, TestRows.events(6))
              .deletePositions(r -> (Long) r.getField("id") % 5 == 0);
      String metadata = table.metadataLocation();
      assertThat(metadata).startsWith("s3://");
      assertThat(table.dataFiles()).allSatisfy(f -> assertThat(f.location()).startsWith("s3://"));

      StorageSettings storage = settings(s3, s3.secretKey());
      assertThat(storage.toString()).doesNotContain(s3.secretKey()).contains("hidden");
      try (TableAccess tables = new TableAccess(storage);
          SliceReads reads = new SliceReads(tables, allocator, 1)) {
        DatasetSpec spec = DatasetSpec.of("s3", metadata);
        assertSameRows(sortedById(reads.readAll(spec)), sortedById(readAllGeneric(table.table())));
        assertThat(reads.plan(spec).slices().size()).isGreaterThan(2);
        for (String scheme : new String[] {"s3a", "s3n"}) {
          String other = scheme + metadata.substring("s3".length());
          assertThat(reads.readAll(DatasetSpec.of("s3", other))).hasSize(2_400);
        }
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void objectStoreFilesAreDecodedByTheVectorizedReaderWhenTheNativeOneIsAskedFor()
      throws Exception {
    try (S3TestServer s3 = S3TestServer.start();
        BufferAllocator allocator = new RootAllocator()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.inCatalog(s3.catalog("warehouse"), "db")
              .create("flat", TestRows.EVENTS)
              .appendFiles(2, 1_000, TestRows.events(2));
      try (TableAccess tables = new TableAccess(settings(s3, s3.secretKey()));
          SliceReads reads =
              new SliceReads(tables, allocator, 1L << 30, SliceLoader.Decoders.NATIVE)) {
        DatasetSpec spec = DatasetSpec.of("s3", table.metadataLocation());
        assertSameRows(sortedById(reads.readAll(spec)), sortedById(readAllGeneric(table.table())));
        assertThat(reads.decoders(spec)).containsOnly(SliceLoader.VECTORIZED);
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void refusedCredentialsAndMissingBucketsAndObjectsSayWhatWasWrong() throws Exception {
    try (S3TestServer s3 = S3TestServer.start()) {
      IcebergTestTables.TestTable table =
          IcebergTestTables.inCatalog(s3.catalog("warehouse"), "db")
              .create("events", TestRows.EVENTS)
              .appendFiles(1, 100, TestRows.events(6));
      String metadata = table.metadataLocation();
      try (TableAccess wrong = new TableAccess(settings(s3, "not-the-secret"))) {
        assertThatThrownBy(() -> wrong.open(wrong.resolve(metadata, null)))
            .satisfies(
                e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.STORAGE_ACCESS_DENIED))
            .hasMessageContaining("S3 refused the node's credentials")
            .hasMessageContaining(metadata);
      }
      try (TableAccess tables = new TableAccess(settings(s3, s3.secretKey()))) {
        String missingObject = s3.uri("warehouse/db/nothing/metadata/v1.metadata.json");
        assertThatThrownBy(() -> tables.open(tables.resolve(missingObject, null)))
            .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.NOT_FOUND))
            .hasMessageContaining(missingObject);
        String missingBucket = "s3://no-such-bucket-here/t/metadata/v1.metadata.json";
        assertThatThrownBy(() -> tables.open(tables.resolve(missingBucket, null)))
            .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.NOT_FOUND))
            .hasMessageContaining("no-such-bucket-here");
      }
    }
  }
}
