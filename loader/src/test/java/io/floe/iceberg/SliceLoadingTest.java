package io.floe.iceberg;

import static io.floe.testing.IcebergTestTables.readAllGeneric;
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
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Slices decode to exactly the rows Iceberg's own generic reader returns, for every type. */
class SliceLoadingTest {
  @TempDir Path dir;
  private BufferAllocator allocator;
  private TableAccess tables;
  private SliceReads reads;

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
    tables = new TableAccess(StorageSettings.defaults());
    reads = new SliceReads(tables, allocator, 1);
  }

  @AfterEach
  void tearDown() {
    reads.close();
    tables.close();
    assertThat(allocator.getAllocatedMemory()).as("bytes still allocated").isZero();
    allocator.close();
  }

  @Test
  void everyTypeWithNullsMatchesGenericRead() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(3, 700, TestRows.allTypes(7));
    DatasetSpec spec = DatasetSpec.of("all", table.metadataLocation()).withBatchRows(128);

    List<Record> served = reads.readAll(spec);

    assertSameRows(sortedById(served), sortedById(readAllGeneric(table.table())));
    assertThat(served).hasSize(2_100);
  }

  @Test
  void slicesFollowRowGroupBoundaries() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 5_000, TestRows.events(3));
    int rowGroups = table.dataFiles().stream().mapToInt(table::rowGroupCount).sum();
    assertThat(rowGroups).as("row groups written").isGreaterThan(2);

    ScanPlan plan = reads.plan(DatasetSpec.of("events", table.metadataLocation()));

    // A target of one byte puts each row group in a slice of its own.
    assertThat(plan.slices()).hasSize(rowGroups);
    assertSameRows(
        sortedById(reads.readAll(DatasetSpec.of("events", table.metadataLocation()))),
        sortedById(readAllGeneric(table.table())));
  }

  @Test
  void positionAndEqualityDeletesAreApplied() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("deletes", TestRows.EVENTS)
            .appendFiles(3, 2_000, TestRows.events(11))
            .deletePositions(r -> (Long) r.getField("id") % 7 == 0)
            .deleteEqual("category", "games");

    List<Record> served = reads.readAll(DatasetSpec.of("d", table.metadataLocation()));

    List<Record> expected = readAllGeneric(table.table());
    assertThat(expected.size()).as("rows left after deletes").isLessThan(6_000 * 6 / 7);
    assertSameRows(sortedById(served), sortedById(expected));
    assertThat(served).noneMatch(r -> "games".equals(r.getField("category")));
  }

  @Test
  void projectionAndFilterMatchGenericRead() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("partitioned", TestRows.EVENTS, TestRows.EVENTS_BY_CATEGORY_AND_DAY)
            .appendFiles(4, 1_500, TestRows.events(5));
    DatasetSpec spec =
        DatasetSpec.of("p", table.metadataLocation())
            .withColumns(List.of("id", "amount"))
            .withFilter("category in ('books', 'music') and amount >= 250.5 and user_id < 900");

    List<Record> served = reads.readAll(spec);

    List<Record> expected =
        readGeneric(
            table.table(),
            Expressions.and(
                Expressions.in("category", "books", "music"),
                Expressions.and(
                    Expressions.greaterThanOrEqual("amount", 250.5),
                    Expressions.lessThan("user_id", 900))),
            "id",
            "amount");
    assertThat(served).isNotEmpty();
    assertThat(served.get(0).struct().fields()).hasSize(2);
    assertSameRows(sortedById(served), sortedById(expected));
  }

  /**
   * The memory floor a plan states is below what its slices hold once loaded, for every type the
   * fixtures hold (lists, maps and structs too), and is none for a filtered dataset.
   */
  @Test
  void aPlansMemoryFloorIsBelowWhatItsSlicesHold() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("floored", TestRows.ALL_TYPES)
            .appendFiles(3, 700, TestRows.allTypes(5));
    DatasetSpec spec = DatasetSpec.of("floored", table.metadataLocation()).withBatchRows(128);

    ScanPlan.MemoryFloor floor = reads.plan(spec).memoryFloor();
    long held = reads.heldBytes(spec);

    assertThat(floor.rows()).isEqualTo(2_100);
    assertThat(floor.bytes()).isPositive().isLessThanOrEqualTo(held);
    DatasetSpec some = spec.withColumns(List.of("id", "int_col"));
    assertThat(reads.plan(some).memoryFloor().bytes())
        .isPositive()
        .isLessThan(floor.bytes())
        .isLessThanOrEqualTo(reads.heldBytes(some));
    assertThat(reads.plan(spec.withFilter("int_col > 0")).memoryFloor())
        .isEqualTo(ScanPlan.MemoryFloor.NONE);
  }

  @Test
  void filtersOnTablesWithListsMapsAndStructsMatchGenericRead() {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("nested", TestRows.ALL_TYPES)
            .appendFiles(3, 400, TestRows.allTypes(13));
    // Filters whose null handling Iceberg's generic reader shares with SQL: > and >= leave
    // nulls out in both; its != and < would keep them.
    record Case(
        String filter, org.apache.iceberg.expressions.Expression iceberg, String[] columns) {}
    List<Case> cases =
        List.of(
            new Case("int_col > 0", Expressions.greaterThan("int_col", 0), new String[0]),
            new Case(
                "struct_col.a >= 3 and string_col is not null",
                Expressions.and(
                    Expressions.greaterThanOrEqual("struct_col.a", 3),
                    Expressions.notNull("string_col")),
                new String[0]),
            new Case("int_list is null", Expressions.isNull("int_list"), new String[0]),
            // With all columns: Iceberg's generic reader itself cannot filter on a list or map it
            // does not serve.
            new Case("struct_list is null", Expressions.isNull("struct_list"), new String[0]),
            new Case("str_int_map is null", Expressions.isNull("str_int_map"), new String[0]),
            new Case(
                "str_int_map is not null and long_col > 0",
                Expressions.and(
                    Expressions.notNull("str_int_map"), Expressions.greaterThan("long_col", 0)),
                new String[0]),
            new Case(
                "double_col > 0",
                Expressions.greaterThan("double_col", 0.0),
                new String[] {"id", "int_list", "str_int_map", "struct_list"}));
    for (Case c : cases) {
      DatasetSpec spec =
          DatasetSpec.of("n", table.metadataLocation())
              .withFilter(c.filter())
              .withColumns(List.of(c.columns()))
              .withBatchRows(64);

      List<Record> served = reads.readAll(spec);

      List<Record> expected = readGeneric(table.table(), c.iceberg(), c.columns());
      assertThat(served).as(c.filter()).isNotEmpty();
      assertSameRows(sortedById(served), sortedById(expected));
    }
  }

  @Test
  void pinnedSnapshotServesOldRows() throws InterruptedException {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("history", TestRows.EVENTS)
            .appendFiles(1, 1_000, TestRows.events(1));
    long first = table.snapshotId();
    long firstMillis = table.table().currentSnapshot().timestampMillis();
    Thread.sleep(5); // snapshots need distinct commit times for an as-of lookup
    table.appendFiles(1, 500, TestRows.events(1));

    DatasetSpec byId = DatasetSpec.of("h", table.metadataLocation()).withSnapshotId(first);
    DatasetSpec byTime = DatasetSpec.of("h", table.metadataLocation()).asOf(firstMillis);
    DatasetSpec current = DatasetSpec.of("h", table.metadataLocation());

    assertThat(reads.readAll(byId)).hasSize(1_000);
    assertThat(reads.readAll(byTime)).hasSize(1_000);
    assertThat(reads.readAll(current)).hasSize(1_500);
  }
}
