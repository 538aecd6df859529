package io.floe.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/**
 * Small consecutive batches are joined up to the batch size, keeping every value, null and string
 * in order (batch lengths that are not multiples of 8 shift the validity bits); batches that do not
 * fit together stay as they are; nothing is left allocated.
 */
class BatchCoalescerTest {
  private static final Schema SCHEMA =
      new Schema(
          List.of(
              Field.nullable("n", new ArrowType.Int(32, true)),
              Field.nullable("s", ArrowType.Utf8.INSTANCE)));

  @Test
  void smallBatchesAreJoinedInOrderUpToTheBatchSize() {
    try (BufferAllocator allocator = new RootAllocator()) {
      int[] lengths = {3, 5, 7, 1, 30, 11, 13};
      List<ArrowRecordBatch> batches = new ArrayList<>();
      int first = 0;
      for (int length : lengths) {
        batches.add(batch(allocator, first, length));
        first += length;
      }
      List<ArrowRecordBatch> joined = BatchCoalescer.coalesce(batches, SCHEMA, 16, allocator);
      batches.forEach(ArrowRecordBatch::close);
      try {
        assertThat(joined).extracting(ArrowRecordBatch::getLength).containsExactly(16, 30, 11, 13);
        int row = 0;
        try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
          for (ArrowRecordBatch batch : joined) {
            new VectorLoader(root).load(batch);
            IntVector n = (IntVector) root.getVector("n");
            VarCharVector s = (VarCharVector) root.getVector("s");
            for (int i = 0; i < root.getRowCount(); i++, row++) {
              if (row % 3 == 0) {
                assertThat(n.isNull(i)).as("row %d", row).isTrue();
              } else {
                assertThat(n.get(i)).as("row %d", row).isEqualTo(row);
              }
              assertThat(s.getObject(i).toString()).isEqualTo(text(row));
            }
          }
        }
        assertThat(row).isEqualTo(70);
      } finally {
        joined.forEach(ArrowRecordBatch::close);
      }
      assertThat(allocator.getAllocatedMemory()).isZero();
    }
  }

  private static String text(int row) {
    return "v" + "x".repeat(row % 4) + row;
  }

  private static ArrowRecordBatch batch(BufferAllocator allocator, int first, int length) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      IntVector n = (IntVector) root.getVector("n");
      VarCharVector s = (VarCharVector) root.getVector("s");
      for (int i = 0; i < length; i++) {
        int row = first + i;
        if (row % 3 == 0) {
          n.setNull(i);
        } else {
          n.setSafe(i, row);
        }
        s.setSafe(i, text(row).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(length);
      return new VectorUnloader(root).getRecordBatch();
    }
  }
}
