package io.floe.iceberg;

import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.spec.DatasetSpec;
import io.floe.store.AllocatorReaper;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.dataset.jni.NativeMemoryPool;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What is Arrow's C++ Parquet reader's own: it serves what the generic row reader serves across
 * row-group boundaries and with columns added later, takes a file only whole (a file split across
 * slices, or one whose columns were widened since, goes to the vectorized reader), fails a full
 * node's load holding nothing, and holds about the bytes it serves. (What both fast decoders do
 * alike is {@link FastDecodersLoadingTest}.)
 */
class NativeLoadingTest {
  @TempDir Path dir;
  private BufferAllocator allocator;
  private TableAccess tables;
  private SliceReads natively;
  private SliceReads generic;

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
    tables = new TableAccess(StorageSettings.defaults());
    // Slices of whole files: the native reader takes a file only whole (row groups of 16 KiB here).
    natively = new SliceReads(tables, allocator, 1L << 30, SliceLoader.Decoders.NATIVE);
    generic = new SliceReads(tables, allocator, 64 * 1024, SliceLoader.Decoders.GENERIC);
  }

  @AfterEach
  void tearDown() {
    natively.close();
    generic.close();
    tables.close();
    assertThat(allocator.getAllocatedMemory()).as("bytes still allocated").isZero();
    allocator.close();
  }

  /** Both paths serve the same rows in the same order; answers them. */
  private List<Record> sameBothWays(SliceReads fast, DatasetSpec spec) {
    List<Record> served = fast.readAll(spec);
    assertSameRows(served, generic.readAll(spec));
    return served;
  }

  @Test
  void theNativeLibraryLoadsHere() {
    assertThat(NativeTaskReader.available()).isTrue();
  }

  @Test
  void aFileOfManyRowGroupsInOneSliceIsReadNativelyOneSplitAcrossSlicesIsNot() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 6_000, TestRows.events(3));
    assertThat(table.dataFiles().stream().mapToInt(table::rowGroupCount).min().orElseThrow())
        .as("row groups per file")
        .isGreaterThan(1);
    DatasetSpec spec = DatasetSpec.of("e", table.metadataLocation()).withBatchRows(1_000);

    assertThat(sameBothWays(natively, spec)).hasSize(12_000);
    assertThat(natively.decoders(spec)).containsOnly(SliceLoader.NATIVE);
    try (SliceReads rowGroups = new SliceReads(tables, allocator, 1, SliceLoader.Decoders.NATIVE)) {
      assertThat(sameBothWays(rowGroups, spec)).hasSize(12_000);
      assertThat(rowGroups.decoders(spec)).containsOnly(SliceLoader.VECTORIZED);
    }
  }

  @Test
  void aFileSplitAcrossSlicesIsReadNativelyFromExcerptsOfItsRowGroups() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 6_000, TestRows.events(3));
    DatasetSpec spec = DatasetSpec.of("e", table.metadataLocation()).withBatchRows(700);
    try (RowGroupExcerpts excerpts = RowGroupExcerpts.in(dir.resolve("scratch"));
        SliceReads oneRowGroupEach =
            new SliceReads(tables, allocator, 1, SliceLoader.Decoders.NATIVE, excerpts)) {
      int slices = oneRowGroupEach.plan(spec).slices().size();
      assertThat(slices)
          .as("a slice per row group")
          .isEqualTo(table.dataFiles().stream().mapToInt(table::rowGroupCount).sum());

      assertThat(sameBothWays(oneRowGroupEach, spec)).hasSize(12_000);
      assertThat(oneRowGroupEach.decoders(spec)).hasSize(slices).containsOnly(SliceLoader.NATIVE);
      // Two columns of the file's seven, in another order: only they are copied.
      DatasetSpec two = spec.withColumns(List.of("amount", "id"));
      assertThat(sameBothWays(oneRowGroupEach, two)).hasSize(12_000);
      assertThat(oneRowGroupEach.decoders(two)).containsOnly(SliceLoader.NATIVE);
      assertThat(excerpts.onDisk()).as("each excerpt deleted once decoded").isZero();
    }
  }

  @Test
  void aScratchDirectoryThatCannotBeWrittenLeavesSplitFilesToTheVectorizedReader()
      throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 6_000, TestRows.events(5));
    DatasetSpec spec = DatasetSpec.of("e", table.metadataLocation());
    try (RowGroupExcerpts excerpts = RowGroupExcerpts.in(dir.resolve("gone"));
        SliceReads reads =
            new SliceReads(tables, allocator, 1, SliceLoader.Decoders.NATIVE, excerpts)) {
      java.nio.file.Files.delete(excerpts.directory().resolve(".lock"));
      java.nio.file.Files.delete(excerpts.directory());
      java.nio.file.Files.delete(dir.resolve("gone"));

      assertThat(sameBothWays(reads, spec)).hasSize(6_000);
      assertThat(reads.decoders(spec)).containsOnly(SliceLoader.VECTORIZED);
    }
  }

  @Test
  void aColumnAddedLaterIsNullsInTheOlderFiles() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("evolving", TestRows.EVENTS)
            .appendFiles(2, 700, TestRows.events(4));
    table.table().updateSchema().addColumn("note", Types.StringType.get()).commit();
    table.appendRows(laterRows(table, 500));
    DatasetSpec spec = DatasetSpec.of("v", table.location());

    List<Record> served = sameBothWays(natively, spec);

    assertThat(served).hasSize(1_900);
    assertThat(served.subList(0, 1_400)).allSatisfy(r -> assertThat(r.getField("note")).isNull());
    assertThat(served.subList(1_400, 1_900))
        .anySatisfy(r -> assertThat(r.getField("note")).isNotNull());
    assertThat(natively.decoders(spec)).containsOnly(SliceLoader.NATIVE);

    // Only the added column: the older files have none of what is asked, yet every row counts.
    DatasetSpec onlyAdded = spec.withColumns(List.of("note"));
    assertThat(sameBothWays(natively, onlyAdded)).hasSize(1_900);
  }

  @Test
  void filesWhoseColumnWasWidenedSinceGoToTheVectorizedReader() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("evolving", TestRows.EVENTS)
            .appendFiles(2, 700, TestRows.events(4));
    // user_id int -> long: the older files' int32 is not the served int64.
    table.table().updateSchema().updateColumn("user_id", Types.LongType.get()).commit();
    table.appendRows(laterRows(table, 500));
    DatasetSpec spec = DatasetSpec.of("w", table.location());

    assertThat(sameBothWays(natively, spec)).hasSize(1_900);
    // The older snapshot's files are slices of their own (commit order), read vectorized.
    assertThat(natively.decoders(spec)).containsExactly(SliceLoader.VECTORIZED, SliceLoader.NATIVE);
  }

  /** Rows of the table's current schema (a note on most, user_id as wide as it is now). */
  private static List<Record> laterRows(IcebergTestTables.TestTable table, int count) {
    org.apache.iceberg.Schema now = table.table().schema();
    List<Record> rows = new java.util.ArrayList<>();
    long first = table.nextId();
    for (Record old : TestRows.rows(TestRows.events(9), first, first + count)) {
      Record row = org.apache.iceberg.data.GenericRecord.create(now);
      for (Types.NestedField field : now.columns()) {
        Object value =
            field.name().equals("note")
                ? ((Long) old.getField("id") % 4 == 0 ? null : "note " + old.getField("id"))
                : old.getField(field.name());
        if (value instanceof Integer i
            && field.type().typeId() == org.apache.iceberg.types.Type.TypeID.LONG) {
          value = i.longValue();
        }
        row.setField(field.name(), value);
      }
      rows.add(row);
    }
    return rows;
  }

  @Test
  void aFullNodeFailsANativeLoadWithTheMemoryErrorAndHoldsNothingJavaOrNative() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .rowGroupBytes(1L << 20)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 20_000, TestRows.events(6));
    SliceSpec slice =
        natively
            .plan(DatasetSpec.of("e", table.metadataLocation()).withBatchRows(1_024))
            .slices()
            .get(0);
    assertThat(NativeTaskReader.available()).isTrue();
    long nativeBefore = NativeMemoryPool.getDefault().getBytesAllocated();
    // Room for the row builder's first batch, not for the file's 20,000 rows.
    try (BufferAllocator small = allocator.newChildAllocator("small node", 0, 256 * 1024)) {
      SliceLoader loader =
          new SliceLoader(small, tables, new AllocatorReaper(), SliceLoader.Decoders.NATIVE);

      Throwable failure = catchThrowable(() -> loader.load(slice));

      assertThat(failure)
          .isInstanceOf(FloeException.class)
          .hasCauseInstanceOf(OutOfMemoryException.class)
          .hasMessageStartingWith("The node's Arrow memory is full: ");
      assertThat(((FloeException) failure).kind()).isEqualTo(ErrorKind.RESOURCE_EXHAUSTED);
      // The native reader met the limit, and no other reader was tried after it.
      assertThat(failure.getCause().getStackTrace())
          .anyMatch(frame -> frame.getClassName().equals(NativeTaskReader.class.getName()))
          .noneMatch(frame -> frame.getClassName().equals(VectorizedTaskReader.class.getName()));
      assertThat(small.getAllocatedMemory()).isZero();
    }
    assertThat(NativeMemoryPool.getDefault().getBytesAllocated())
        .as("native memory after the failed load")
        .isLessThanOrEqualTo(nativeBefore);
  }

  @Test
  void aNativelyDecodedSliceHoldsAboutTheBytesItServes() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .rowGroupBytes(8L << 20)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 100_000, TestRows.events(7));
    SliceSpec slice = natively.plan(DatasetSpec.of("e", table.metadataLocation())).slices().get(0);
    // A node's allocator: exact sizes from 64 KiB up (a plain RootAllocator rounds to powers of 2).
    try (BufferAllocator node = io.floe.arrow.NodeAllocation.root(1L << 30)) {
      SliceLoader loader =
          new SliceLoader(node, tables, new AllocatorReaper(), SliceLoader.Decoders.NATIVE);
      heldAboutServed(loader.load(slice));
    }
  }

  private static void heldAboutServed(io.floe.store.LoadedSlice loaded) {
    try {
      long served = 0;
      for (org.apache.arrow.vector.ipc.message.ArrowRecordBatch batch : loaded.batches()) {
        for (org.apache.arrow.memory.ArrowBuf buffer : batch.getBuffers()) {
          served += buffer.readableBytes();
        }
      }
      assertThat(loaded.decoder()).isEqualTo(SliceLoader.NATIVE);
      assertThat(loaded.rows()).isEqualTo(100_000);
      assertThat(loaded.allocator().getAllocatedMemory())
          .as("bytes held for %,d bytes served", served)
          .isBetween(served, served + served / 20);
    } finally {
      loaded.release();
    }
  }

  @Test
  void onlyLocalFilesAreReadNatively() {
    assertThat(NativeTaskReader.localPath("file:/data/t/a.parquet"))
        .contains(Path.of("/data/t/a.parquet"));
    assertThat(NativeTaskReader.localPath("file:///data/t/a.parquet"))
        .contains(Path.of("/data/t/a.parquet"));
    assertThat(NativeTaskReader.localPath("/data/t/a.parquet"))
        .contains(Path.of("/data/t/a.parquet"));
    assertThat(NativeTaskReader.localPath("file://host/data/a.parquet")).isEmpty();
    assertThat(NativeTaskReader.localPath("s3://bucket/t/a.parquet")).isEmpty();
    assertThat(NativeTaskReader.localPath("gs://bucket/t/a.parquet")).isEmpty();
    assertThat(NativeTaskReader.localPath("data/a.parquet")).isEmpty();
  }

  @Test
  void timestampsAreTheSameValuesWhateverTheFileCallsTheirZone() {
    ArrowType utc = new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
    assertThat(
            NativeTaskReader.sameValues(
                new ArrowType.Timestamp(TimeUnit.MICROSECOND, "+00:00"), utc))
        .isTrue();
    assertThat(
            NativeTaskReader.sameValues(new ArrowType.Timestamp(TimeUnit.MICROSECOND, null), utc))
        .isFalse();
    assertThat(
            NativeTaskReader.sameValues(new ArrowType.Timestamp(TimeUnit.NANOSECOND, "UTC"), utc))
        .isFalse();
    assertThat(NativeTaskReader.sameValues(ArrowType.LargeUtf8.INSTANCE, ArrowType.Utf8.INSTANCE))
        .isFalse();
  }
}
