package io.floe.testing;

import static io.floe.testing.RecordAssertions.assertSameRows;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergTestTables.TestTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class IcebergTestTablesTest {
  @TempDir Path dir;

  @Test
  void writesSeveralFilesEachWithSeveralRowGroups() {
    RowGenerator rows = TestRows.events(1);
    TestTable t = IcebergTestTables.in(dir).create("events", TestRows.EVENTS);

    t.appendFiles(4, 2_000, rows);

    List<DataFile> files = t.dataFiles();
    assertThat(files).hasSize(4).allSatisfy(f -> assertThat(f.recordCount()).isEqualTo(2_000));
    assertThat(files).allSatisfy(f -> assertThat(t.rowGroupCount(f)).isGreaterThanOrEqualTo(3));
    assertSameRows(
        IcebergTestTables.sortedById(IcebergTestTables.readAllGeneric(t.table())),
        TestRows.rows(rows, 0, 8_000));
  }

  @Test
  void metadataLocationPointsAtTheCurrentMetadataJson() {
    TestTable t =
        IcebergTestTables.in(dir).create("events", TestRows.EVENTS).appendFiles(1, 10, events());

    String metadata = t.metadataLocation();

    assertThat(metadata).endsWith(".metadata.json");
    assertThat(Files.exists(Path.of(metadata.replaceFirst("^file:", "")))).isTrue();
    Table reloaded = new HadoopTables().load(t.location());
    assertThat(reloaded.currentSnapshot().snapshotId()).isEqualTo(t.snapshotId());
    assertThat(((HasTableOperations) reloaded).operations().current().formatVersion()).isEqualTo(2);
  }

  @Test
  void partitionedTableGetsFilesPerPartition() {
    TestTable t =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS, TestRows.EVENTS_BY_CATEGORY_AND_DAY)
            .appendFiles(2, 2_000, events());

    Map<String, List<DataFile>> byPartition =
        t.dataFiles().stream().collect(Collectors.groupingBy(f -> f.partition().toString()));
    // 4 categories x 3 days, and each of the 2 chunks of rows touches every partition.
    assertThat(byPartition).hasSize(TestRows.CATEGORIES.size() * TestRows.EVENT_DAYS);
    assertThat(byPartition.values()).allSatisfy(files -> assertThat(files).hasSize(2));

    List<Record> books =
        IcebergTestTables.readGeneric(
            t.table(), Expressions.equal("category", "books"), "id", "category");
    assertThat(books)
        .isNotEmpty()
        .allSatisfy(r -> assertThat(r.getField("category")).isEqualTo("books"));
    assertThat(books)
        .hasSize(
            (int)
                TestRows.rows(events(), 0, 4_000).stream()
                    .filter(r -> r.getField("category").equals("books"))
                    .count());
  }

  static Stream<PartitionSpec> specs() {
    return Stream.of(
        PartitionSpec.unpartitioned(),
        TestRows.EVENTS_BY_CATEGORY_AND_DAY,
        TestRows.EVENTS_BY_CATEGORY_AND_USER_BUCKET);
  }

  @ParameterizedTest
  @MethodSource("specs")
  void deletesApplyAndOlderSnapshotsStayReadable(PartitionSpec spec) {
    RowGenerator rows = events();
    TestTable t =
        IcebergTestTables.in(dir).create("events", TestRows.EVENTS, spec).appendFiles(2, 600, rows);
    Snapshot beforeDeletes = t.table().currentSnapshot();

    t.deletePositions(r -> (Long) r.getField("id") % 10 == 0).deleteEqual("category", "games");

    assertThat(t.table().snapshots()).hasSize(3);
    assertThat(t.deleteFiles())
        .extracting(f -> f.content())
        .contains(FileContent.POSITION_DELETES, FileContent.EQUALITY_DELETES);
    List<Record> expected =
        TestRows.rows(rows, 0, 1_200).stream()
            .filter(r -> (Long) r.getField("id") % 10 != 0)
            .filter(r -> !r.getField("category").equals("games"))
            .collect(Collectors.toList());
    assertSameRows(
        IcebergTestTables.sortedById(IcebergTestTables.readAllGeneric(t.table())), expected);

    List<Record> all = TestRows.rows(rows, 0, 1_200);
    List<Record> byId = IcebergTestTables.readSnapshot(t.table(), beforeDeletes.snapshotId());
    assertSameRows(IcebergTestTables.sortedById(byId), all);
    List<Record> byTime = IcebergTestTables.readAsOf(t.table(), beforeDeletes.timestampMillis());
    assertSameRows(IcebergTestTables.sortedById(byTime), all);
  }

  @Test
  void appendsContinueIds() {
    TestTable t =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 100, events())
            .appendFiles(2, 50, events());

    assertThat(t.nextId()).isEqualTo(200);
    assertSameRows(
        IcebergTestTables.sortedById(IcebergTestTables.readAllGeneric(t.table())),
        TestRows.rows(events(), 0, 200));
  }

  @Test
  void allTypesRoundTripWithNulls() {
    RowGenerator rows = TestRows.allTypes(7);
    TestTable t =
        IcebergTestTables.in(dir).create("all_types", TestRows.ALL_TYPES).appendFiles(2, 300, rows);

    List<Record> read = IcebergTestTables.sortedById(IcebergTestTables.readAllGeneric(t.table()));

    assertSameRows(read, TestRows.rows(rows, 0, 600));
    for (Types.NestedField column : TestRows.ALL_TYPES.columns()) {
      if (column.isOptional()) {
        assertThat(read).as(column.name()).anyMatch(r -> r.getField(column.name()) == null);
        assertThat(read).as(column.name()).anyMatch(r -> r.getField(column.name()) != null);
      }
    }
    assertThat(t.dataFiles()).allSatisfy(f -> assertThat(t.rowGroupCount(f)).isGreaterThan(1));
  }

  @Test
  void projectedFilteredRead() {
    TestTable t =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(1, 200, TestRows.allTypes(3));

    List<Record> read =
        IcebergTestTables.readGeneric(
            t.table(), Expressions.lessThan("id", 50L), "id", "string_col");

    assertThat(read).hasSize(50);
    assertThat(read.get(0).struct().fields())
        .extracting(Types.NestedField::name)
        .containsExactly("id", "string_col");
  }

  private static RowGenerator events() {
    return TestRows.events(42);
  }
}
