package io.floe.iceberg;

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
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Iceberg's vectorized reader takes that Arrow's C++ reader does not: files whose columns were
 * widened since they were written, and columns added later, served as the generic reader serves
 * them. (What both fast decoders do alike is {@link FastDecodersLoadingTest}.)
 */
class VectorizedLoadingTest {
  @TempDir Path dir;
  private BufferAllocator allocator;
  private TableAccess tables;
  private SliceReads vectorized;
  private SliceReads generic;

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
    tables = new TableAccess(StorageSettings.defaults());
    vectorized = new SliceReads(tables, allocator, 64 * 1024, SliceLoader.Decoders.VECTORIZED);
    generic = new SliceReads(tables, allocator, 64 * 1024, SliceLoader.Decoders.GENERIC);
  }

  @AfterEach
  void tearDown() {
    vectorized.close();
    generic.close();
    tables.close();
    assertThat(allocator.getAllocatedMemory()).as("bytes still allocated").isZero();
    allocator.close();
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

    List<Record> served = vectorized.readAll(spec);
    assertSameRows(served, generic.readAll(spec));

    assertThat(served).hasSize(1_400).allSatisfy(r -> assertThat(r.getField("note")).isNull());
    assertThat(vectorized.decoders(spec)).containsOnly(SliceLoader.VECTORIZED);
  }
}
