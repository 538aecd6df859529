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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The vectorized load path serves exactly what the generic row reader serves, for every type it
 * takes, with nulls, dictionary-encoded pages, decimals of each storage, missing and widened
 * columns; and the generic reader still takes what the vectorized one cannot (delete files, nested
 * columns, a filter the partition does not decide).
 */
class VectorizedLoadingTest {
  /** Every primitive column of {@link TestRows#ALL_TYPES}. */
  private static final List<String> PRIMITIVES =
      TestRows.ALL_TYPES.columns().stream()
          .filter(f -> f.type().isPrimitiveType())
          .map(Types.NestedField::name)
          .collect(Collectors.toList());

  @TempDir Path dir;
  private BufferAllocator allocator;
  private TableAccess tables;
  private SliceReads vectorized;
  private SliceReads generic;

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
    tables = new TableAccess(StorageSettings.defaults());
    vectorized = new SliceReads(tables, allocator, 64 * 1024, true);
    generic = new SliceReads(tables, allocator, 64 * 1024, false);
  }

  @AfterEach
  void tearDown() {
    vectorized.close();
    generic.close();
    tables.close();
    assertThat(allocator.getAllocatedMemory()).as("bytes still allocated").isZero();
    allocator.close();
  }

  /** Both paths serve the same rows in the same order; answers them. */
  private List<Record> sameBothWays(DatasetSpec spec) {
    List<Record> fast = vectorized.readAll(spec);
    List<Record> slow = generic.readAll(spec);
    assertSameRows(fast, slow);
    return fast;
  }

  @Test
  void everyPrimitiveTypeWithNullsIsServedAsTheGenericReaderServesIt() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(3, 900, TestRows.allTypes(21));
    DatasetSpec spec =
        DatasetSpec.of("t", table.metadataLocation()).withColumns(PRIMITIVES).withBatchRows(256);

    List<Record> served = sameBothWays(spec);

    assertThat(served).hasSize(2_700);
    assertSameRows(
        sortedById(served),
        sortedById(
            readGeneric(
                table.table(), Expressions.alwaysTrue(), PRIMITIVES.toArray(String[]::new))));
    assertThat(vectorized.decoders(spec)).containsOnly(SliceLoader.VECTORIZED);
    assertThat(generic.decoders(spec)).containsOnly(SliceLoader.GENERIC);
  }

  @Test
  void tasksWithDeleteFilesOrNestedColumnsGoToTheGenericReader() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(2, 600, TestRows.allTypes(3));
    DatasetSpec nested = DatasetSpec.of("t", table.metadataLocation());
    assertThat(vectorized.decoders(nested)).containsOnly(SliceLoader.GENERIC);
    sameBothWays(nested);

    table.deletePositions(r -> (Long) r.getField("id") % 3 == 0);
    DatasetSpec flat = DatasetSpec.of("t", table.metadataLocation()).withColumns(PRIMITIVES);
    assertThat(sameBothWays(flat)).hasSize(800);
    assertThat(vectorized.decoders(flat)).containsOnly(SliceLoader.GENERIC);
  }

  @Test
  void aFilterTheTaskPartitionDecidesStaysVectorizedOthersDoNot() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS, TestRows.EVENTS_BY_CATEGORY_AND_DAY)
            .appendFiles(2, 1_500, TestRows.events(8));
    DatasetSpec byPartition =
        DatasetSpec.of("e", table.metadataLocation())
            .withColumns(List.of("id", "user_id", "amount", "event_time"))
            .withFilter("category = 'books'");
    assertThat(sameBothWays(byPartition)).isNotEmpty();
    assertThat(vectorized.decoders(byPartition)).containsOnly(SliceLoader.VECTORIZED);

    DatasetSpec byValue = byPartition.withFilter("amount > 100");
    sameBothWays(byValue);
    assertThat(vectorized.decoders(byValue)).containsOnly(SliceLoader.GENERIC);
  }

  @Test
  void columnsAddedOrWidenedLaterAreServedLikeTheGenericReaderServesThem() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("evolving", TestRows.EVENTS)
            .appendFiles(2, 700, TestRows.events(4));
    // user_id int -> long, amount double stays, a new string column the old files lack.
    table.table().updateSchema().updateColumn("user_id", Types.LongType.get()).commit();
    table.table().updateSchema().addColumn("note", Types.StringType.get()).commit();
    DatasetSpec spec = DatasetSpec.of("v", table.location());

    List<Record> served = sameBothWays(spec);

    assertThat(served).hasSize(1_400).allSatisfy(r -> assertThat(r.getField("note")).isNull());
    assertThat(vectorized.decoders(spec)).containsOnly(SliceLoader.VECTORIZED);
  }
}
