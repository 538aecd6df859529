package io.floe.iceberg;

import static io.floe.testing.IcebergTestTables.readGeneric;
import static io.floe.testing.IcebergTestTables.sortedById;
import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spec.DatasetSpec;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each fast decoder (Iceberg's vectorized reader, Arrow's C++ Parquet reader) serves exactly what
 * the generic row reader serves, for every primitive type with nulls, dictionary-encoded pages and
 * decimals of each storage, with a filter the partition decides; and every task it cannot take
 * (delete files, nested columns, a filter on values) goes on to the generic reader. What differs
 * between them is in {@link VectorizedLoadingTest} and {@link NativeLoadingTest}.
 */
class FastDecodersLoadingTest {
  /** Every primitive column of {@link TestRows#ALL_TYPES}. */
  static final List<String> PRIMITIVES =
      TestRows.ALL_TYPES.columns().stream()
          .filter(f -> f.type().isPrimitiveType())
          .map(Types.NestedField::name)
          .collect(Collectors.toList());

  /** A fast decoder, the slice target its tests load with, and what a slice it decoded says. */
  enum Fast {
    VECTORIZED(SliceLoader.Decoders.VECTORIZED, 64 * 1024, SliceLoader.VECTORIZED),
    // Slices of whole files, which the native reader decodes where they lie.
    NATIVE(SliceLoader.Decoders.NATIVE, 1L << 30, SliceLoader.NATIVE),
    // Slices of a few row groups (of 16 KiB here), which it decodes from excerpts.
    NATIVE_ROW_GROUPS(SliceLoader.Decoders.NATIVE, 64 * 1024, SliceLoader.NATIVE);

    final SliceLoader.Decoders decoders;
    final long sliceTargetBytes;
    final String decoder;

    Fast(SliceLoader.Decoders decoders, long sliceTargetBytes, String decoder) {
      this.decoders = decoders;
      this.sliceTargetBytes = sliceTargetBytes;
      this.decoder = decoder;
    }
  }

  @TempDir Path dir;
  private BufferAllocator allocator;
  private TableAccess tables;
  private SliceReads generic;
  private RowGroupExcerpts excerpts;

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
    tables = new TableAccess(StorageSettings.defaults());
    generic = new SliceReads(tables, allocator, 64 * 1024, SliceLoader.Decoders.GENERIC);
  }

  @AfterEach
  void tearDown() {
    generic.close();
    if (excerpts != null) {
      assertThat(excerpts.onDisk()).as("excerpts left behind").isZero();
      excerpts.close();
      assertThat(excerpts.directory()).doesNotExist();
    }
    tables.close();
    assertThat(allocator.getAllocatedMemory()).as("bytes still allocated").isZero();
    allocator.close();
  }

  private SliceReads reads(Fast fast) {
    if (fast == Fast.NATIVE_ROW_GROUPS) {
      excerpts = RowGroupExcerpts.in(dir.resolve("scratch"));
    }
    return new SliceReads(tables, allocator, fast.sliceTargetBytes, fast.decoders, excerpts);
  }

  /** Both paths serve the same rows in the same order; answers them. */
  private List<Record> sameBothWays(SliceReads fast, DatasetSpec spec) {
    List<Record> served = fast.readAll(spec);
    assertSameRows(served, generic.readAll(spec));
    return served;
  }

  @ParameterizedTest
  @EnumSource(Fast.class)
  void everyPrimitiveTypeWithNullsIsServedAsTheGenericReaderServesIt(Fast fast) {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(3, 900, TestRows.allTypes(21));
    // 256-row batches: the native reader hands out slices of larger decoded arrays.
    DatasetSpec spec =
        DatasetSpec.of("t", table.metadataLocation()).withColumns(PRIMITIVES).withBatchRows(256);
    try (SliceReads reads = reads(fast)) {
      List<Record> served = sameBothWays(reads, spec);

      assertThat(served).hasSize(2_700);
      assertSameRows(
          sortedById(served),
          sortedById(
              readGeneric(
                  table.table(), Expressions.alwaysTrue(), PRIMITIVES.toArray(String[]::new))));
      assertThat(reads.decoders(spec)).containsOnly(fast.decoder);
      assertThat(generic.decoders(spec)).containsOnly(SliceLoader.GENERIC);
    }
  }

  @ParameterizedTest
  @EnumSource(Fast.class)
  void tasksWithDeleteFilesOrNestedColumnsGoToTheGenericReader(Fast fast) {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(2, 600, TestRows.allTypes(3));
    try (SliceReads reads = reads(fast)) {
      DatasetSpec nested = DatasetSpec.of("t", table.metadataLocation());
      assertThat(reads.decoders(nested)).containsOnly(SliceLoader.GENERIC);
      sameBothWays(reads, nested);

      table.deletePositions(r -> (Long) r.getField("id") % 3 == 0);
      DatasetSpec flat = DatasetSpec.of("t", table.metadataLocation()).withColumns(PRIMITIVES);
      assertThat(sameBothWays(reads, flat)).hasSize(800);
      assertThat(reads.decoders(flat)).containsOnly(SliceLoader.GENERIC);
    }
  }

  @ParameterizedTest
  @EnumSource(Fast.class)
  void aFilterTheTaskPartitionDecidesStaysFastOthersDoNot(Fast fast) {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS, TestRows.EVENTS_BY_CATEGORY_AND_DAY)
            .appendFiles(2, 1_500, TestRows.events(8));
    DatasetSpec byPartition =
        DatasetSpec.of("e", table.metadataLocation())
            .withColumns(List.of("id", "user_id", "amount", "event_time"))
            .withFilter("category = 'books'");
    try (SliceReads reads = reads(fast)) {
      assertThat(sameBothWays(reads, byPartition)).isNotEmpty();
      assertThat(reads.decoders(byPartition)).containsOnly(fast.decoder);

      DatasetSpec byValue = byPartition.withFilter("amount > 100");
      sameBothWays(reads, byValue);
      assertThat(reads.decoders(byValue)).containsOnly(SliceLoader.GENERIC);
    }
  }
}
