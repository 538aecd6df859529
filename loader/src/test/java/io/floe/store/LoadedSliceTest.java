package io.floe.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A slice finds the batch of each of its rows, whatever the lengths of its batches. */
class LoadedSliceTest {
  private static final Schema SCHEMA =
      new Schema(List.of(Field.nullable("x", new ArrowType.Int(32, true))));

  @ParameterizedTest
  @ValueSource(strings = {"64,64,64,10", "64", "64,64", "5,64,64", "64,0,64", "0,64", "64,64,65"})
  void everyRowIsInTheBatchWhoseRangeHoldsIt(String lengths) {
    try (BufferAllocator root = new RootAllocator();
        AllocatorReaper reaper = new AllocatorReaper()) {
      BufferAllocator allocator = root.newChildAllocator("slice", 0, Long.MAX_VALUE);
      List<ArrowRecordBatch> batches = new ArrayList<>();
      List<long[]> ranges = new ArrayList<>();
      long start = 0;
      for (String length : lengths.split(",")) {
        int rows = Integer.parseInt(length);
        try (VectorSchemaRoot batch = VectorSchemaRoot.create(SCHEMA, allocator)) {
          ((IntVector) batch.getVector(0)).allocateNew(Math.max(1, rows));
          batch.setRowCount(rows);
          batches.add(new VectorUnloader(batch).getRecordBatch());
        }
        ranges.add(new long[] {start, start + rows});
        start += rows;
      }
      LoadedSlice slice = new LoadedSlice("d/1/s", SCHEMA, batches, allocator, reaper, "test");
      for (long row = 0; row < slice.rows(); row++) {
        int batch = slice.batchOf(row);
        assertThat(row)
            .as("row %s in batch %s", row, batch)
            .isBetween(ranges.get(batch)[0], ranges.get(batch)[1] - 1);
        assertThat(slice.batchStart(batch)).isEqualTo(ranges.get(batch)[0]);
      }
      slice.release();
    }
  }
}
