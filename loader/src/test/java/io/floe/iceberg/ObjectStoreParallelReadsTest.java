package io.floe.iceberg;

import static io.floe.testing.IcebergTestTables.readAllGeneric;
import static io.floe.testing.IcebergTestTables.readGeneric;
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
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.expressions.Expressions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Object-store files read in parallel ranged requests (io.floe.table.ParallelReads) load the same
 * rows as the generic reader and as one request at a time: a table written by Iceberg's writers to
 * s3proxy on 127.0.0.1 with several files of many row groups, every type the fixtures hold with
 * nulls, whole and projected, ranges cut into 64 KiB pieces so that each row group is many requests
 * at once; a missing object still fails with the code it failed with before.
 */
class ObjectStoreParallelReadsTest {
  private static S3TestServer s3;
  private static IcebergTestTables.TestTable allTypes;
  private static IcebergTestTables.TestTable events;
  @org.junit.jupiter.api.io.TempDir static java.nio.file.Path scratch;

  @BeforeAll
  static void writeTables() throws Exception {
    s3 = S3TestServer.start();
    IcebergTestTables tables =
        IcebergTestTables.inCatalog(s3.catalog("warehouse"), "db").rowGroupBytes(256 * 1024);
    allTypes =
        tables.create("all_types", TestRows.ALL_TYPES).appendFiles(3, 6_000, TestRows.allTypes(3));
    events = tables.create("events", TestRows.EVENTS).appendFiles(3, 40_000, TestRows.events(4));
    for (DataFile file : events.dataFiles()) {
      // Iceberg's writer records where each row group starts.
      assertThat(file.splitOffsets()).as("row groups of %s", file.location()).hasSizeGreaterThan(2);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    s3.close();
  }

  private static StorageSettings settings(int requests) {
    StorageSettings.Builder builder =
        StorageSettings.builder().parallelRequests(requests).rangeSize(64 * 1024);
    s3.fileIOProperties().forEach(builder::property);
    return builder.build();
  }

  private static List<org.apache.iceberg.data.Record> load(
      int requests, SliceLoader.Decoders decoders, DatasetSpec spec) {
    return load(requests, decoders, spec, null);
  }

  /**
   * The dataset's rows as slices of about 512 KiB serve them; with {@code scratch}, the native
   * reader decodes excerpts written there, and every slice says so.
   */
  private static List<org.apache.iceberg.data.Record> load(
      int requests, SliceLoader.Decoders decoders, DatasetSpec spec, java.nio.file.Path scratch) {
    try (BufferAllocator allocator = new RootAllocator();
        TableAccess tables = new TableAccess(settings(requests));
        RowGroupExcerpts excerpts = scratch == null ? null : RowGroupExcerpts.in(scratch);
        SliceReads reads = new SliceReads(tables, allocator, 512 * 1024, decoders, excerpts)) {
      List<org.apache.iceberg.data.Record> rows = reads.readAll(spec);
      assertThat(reads.plan(spec).slices()).hasSizeGreaterThan(2);
      if (excerpts != null) {
        assertThat(reads.decoders(spec)).containsOnly(SliceLoader.NATIVE);
        assertThat(excerpts.onDisk()).isZero();
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
      return rows;
    }
  }

  @Test
  void everyTypeLoadsAsTheGenericReaderReadsIt() {
    DatasetSpec spec = DatasetSpec.of("all", allTypes.metadataLocation());
    List<org.apache.iceberg.data.Record> expected = sortedById(readAllGeneric(allTypes.table()));
    for (SliceLoader.Decoders decoders : SliceLoader.Decoders.values()) {
      assertSameRows(sortedById(load(8, decoders, spec)), expected);
    }
    DatasetSpec primitives = spec.withColumns(FastDecodersLoadingTest.PRIMITIVES);
    assertSameRows(
        sortedById(load(8, SliceLoader.Decoders.NATIVE, primitives, scratch)),
        sortedById(
            readGeneric(
                allTypes.table(),
                Expressions.alwaysTrue(),
                FastDecodersLoadingTest.PRIMITIVES.toArray(String[]::new))));
  }

  @Test
  void theNativeReaderDecodesObjectStoreFilesFromExcerptsOfTheirColumnChunks() {
    DatasetSpec whole = DatasetSpec.of("events", events.metadataLocation());
    List<org.apache.iceberg.data.Record> generic = sortedById(readAllGeneric(events.table()));
    assertSameRows(sortedById(load(8, SliceLoader.Decoders.NATIVE, whole, scratch)), generic);
    assertSameRows(sortedById(load(0, SliceLoader.Decoders.NATIVE, whole, scratch)), generic);
    // Columns apart in the file: only their chunks are fetched, as ranges with gaps between them.
    DatasetSpec projected = whole.withColumns(List.of("amount", "id"));
    assertSameRows(
        load(3, SliceLoader.Decoders.NATIVE, projected, scratch),
        load(3, SliceLoader.Decoders.GENERIC, projected));
  }

  @Test
  void manyRowGroupsWholeAndProjectedLoadAsOneRequestAtATimeAndTheGenericReader() {
    DatasetSpec whole = DatasetSpec.of("events", events.metadataLocation());
    List<org.apache.iceberg.data.Record> parallel = load(8, SliceLoader.Decoders.NATIVE, whole);
    assertSameRows(sortedById(parallel), sortedById(readAllGeneric(events.table())));
    assertSameRows(parallel, load(0, SliceLoader.Decoders.NATIVE, whole));

    // Columns apart in the file: ranges with gaps between them, each cut into pieces.
    DatasetSpec projected = whole.withColumns(List.of("id", "amount"));
    assertSameRows(
        sortedById(load(3, SliceLoader.Decoders.VECTORIZED, projected)),
        sortedById(readGeneric(events.table(), Expressions.alwaysTrue(), "id", "amount")));
  }

  @Test
  void aMissingObjectFailsAsItDidWithOneRequestAtATime() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.inCatalog(s3.catalog("gone"), "db")
            .create("gone", TestRows.EVENTS)
            .appendFiles(2, 1_000, TestRows.events(5));
    DatasetSpec spec = DatasetSpec.of("gone", table.metadataLocation());
    String missing = table.dataFiles().get(0).location();
    try (BufferAllocator allocator = new RootAllocator()) {
      try (TableAccess tables = new TableAccess(settings(8));
          SliceReads reads =
              new SliceReads(tables, allocator, 1L << 30, SliceLoader.Decoders.NATIVE)) {
        var plan = reads.plan(spec);
        table.table().io().deleteFile(missing);
        for (int requests : new int[] {8, 0}) {
          // With excerpts too: the native reader's reading of the file fails with the same kind.
          try (TableAccess other = new TableAccess(settings(requests));
              RowGroupExcerpts excerpts =
                  requests == 0 ? null : RowGroupExcerpts.in(scratch.resolve("missing"));
              SliceReads otherReads =
                  new SliceReads(
                      other, allocator, 1L << 30, SliceLoader.Decoders.NATIVE, excerpts)) {
            assertThatThrownBy(() -> otherReads.readAll(spec))
                .as("%s requests", requests)
                .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.NOT_FOUND))
                .hasMessageContaining(missing.substring(missing.lastIndexOf('/') + 1));
          }
        }
        assertThat(plan.slices()).isNotEmpty();
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }
}
