package io.floe.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.spec.DatasetSpec;
import io.floe.spec.InvalidSpecException;
import io.floe.store.AllocatorReaper;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who a failed load is blamed on: what Floe's own checks refuse is the caller's mistake
 * (INVALID_ARGUMENT); an exception from inside the loader, Iceberg or Parquet on a request that
 * passed them is the node's failure (INTERNAL), whatever its Java type.
 */
class FailureBlameTest {
  @TempDir Path dir;
  private BufferAllocator allocator;
  private TableAccess tables;
  private SliceReads reads;
  private IcebergTestTables.TestTable table;

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
    tables = new TableAccess(StorageSettings.defaults());
    reads = new SliceReads(tables, allocator, 1);
    table =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(1, 200, TestRows.allTypes(3));
  }

  @AfterEach
  void tearDown() {
    reads.close();
    tables.close();
    assertThat(allocator.getAllocatedMemory()).as("bytes still allocated").isZero();
    allocator.close();
  }

  @Test
  void aSliceTheLoaderCannotDecodeIsTheNodesFailureAndLeavesNoMemoryTaken() {
    SliceSpec planned = reads.plan(DatasetSpec.of("t", table.metadataLocation())).slices().get(0);
    // What a planner bug would hand a node: "id" (a long in the files) served as a list.
    Schema wrong =
        new Schema(
            Types.NestedField.required(
                1, "id", Types.ListType.ofOptional(1_000, Types.LongType.get())));
    SliceSpec broken =
        new SliceSpec(
            planned.sliceId(),
            planned.source(),
            SchemaParser.toJson(wrong),
            planned.filterJson(),
            planned.nameMappingJson(),
            planned.taskJsons(),
            planned.batchRows(),
            planned.estimatedBytes());
    AllocatorReaper reaper = new AllocatorReaper();
    SliceLoader loader = new SliceLoader(allocator, tables, reaper, true);

    Throwable failure = catchThrowable(() -> loader.load(broken));

    assertThat(failure).isNotNull().isNotInstanceOf(InvalidSpecException.class);
    assertThat(FloeException.kindOf(failure)).isEqualTo(ErrorKind.INTERNAL);
  }

  @Test
  void aFullNodeSaysHowMuchItHoldsOfWhichLimit() {
    SliceSpec slice = reads.plan(DatasetSpec.of("t", table.metadataLocation())).slices().get(0);
    try (BufferAllocator small = allocator.newChildAllocator("small node", 0, 64 * 1024)) {
      SliceLoader loader = new SliceLoader(small, tables, new AllocatorReaper(), true);
      Throwable failure = catchThrowable(() -> loader.load(slice));
      assertThat(failure)
          .isInstanceOf(FloeException.class)
          .hasCauseInstanceOf(OutOfMemoryException.class)
          .hasMessageStartingWith("The node's Arrow memory is full: ")
          .hasMessageContaining("this slice needed 1.0 KiB (1,024 bytes) more while decoding")
          .hasMessageContaining("of its 64.0 KiB (65,536 bytes) memory limit held")
          .hasMessageContaining("FLOE_MEMORY_LIMIT");
      assertThat(FloeException.kindOf(failure)).isEqualTo(ErrorKind.RESOURCE_EXHAUSTED);
      assertThat(small.getAllocatedMemory()).isZero();
    }
  }

  @Test
  void argumentErrorsFromInsideIcebergAreTheNodesFailure() {
    assertThat(
            FloeException.kindOf(
                new IllegalArgumentException(
                    "Cannot explicitly project List or Map types, 3:emb of type list<float> was"
                        + " selected")))
        .isEqualTo(ErrorKind.INTERNAL);
    assertThat(FloeException.kindOf(new ValidationException("Cannot find field 'x'")))
        .isEqualTo(ErrorKind.INTERNAL);
  }

  @Test
  void whatFloesChecksRefuseIsTheCallersMistake() {
    for (DatasetSpec spec :
        List.of(
            DatasetSpec.of("t", table.metadataLocation()).withColumns(List.of("nope")),
            DatasetSpec.of("t", table.metadataLocation()).withSnapshotId(42L),
            DatasetSpec.of("t", table.metadataLocation()).withFilter("int_list.element = 3"),
            DatasetSpec.of("t", table.metadataLocation()).withFilter("str_int_map.value > 3"),
            DatasetSpec.of("t", table.metadataLocation()).withFilter("int_list > 3"),
            DatasetSpec.of("t", table.metadataLocation()).withColumns(List.of("id")).asOf(1L))) {
      Throwable failure = catchThrowable(() -> reads.plan(spec));
      assertThat(failure).as(spec.toString()).isInstanceOf(InvalidSpecException.class);
      assertThat(FloeException.kindOf(failure))
          .as(spec.toString())
          .isEqualTo(ErrorKind.INVALID_ARGUMENT);
    }
    assertThat(
            catchThrowable(
                () ->
                    reads.plan(
                        DatasetSpec.of("t", table.metadataLocation())
                            .withFilter("int_list.element = 3"))))
        .hasMessageContaining("column 'int_list.element' is inside list 'int_list'");
  }
}
