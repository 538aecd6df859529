package io.floe.arrow;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * Joins runs of small consecutive record batches into batches of up to the slice's batch size. The
 * vectorized reader gives one batch per Parquet row group at most, so a file written with small row
 * groups (a few thousand rows, as some writers do) would otherwise be served in batches that small,
 * and every batch costs a message, a header and a round of bookkeeping on the way out.
 */
public final class BatchCoalescer {
  private BatchCoalescer() {}

  /**
   * Batches holding the rows of {@code batches} in order, consecutive ones joined while they fit in
   * {@code batchRows} rows; all new (the caller closes them, and still owns the input batches).
   */
  public static List<ArrowRecordBatch> coalesce(
      List<ArrowRecordBatch> batches, Schema schema, int batchRows, BufferAllocator allocator) {
    List<ArrowRecordBatch> out = new ArrayList<>(batches.size());
    try {
      int i = 0;
      while (i < batches.size()) {
        int end = i + 1;
        long rows = batches.get(i).getLength();
        while (end < batches.size() && rows + batches.get(end).getLength() <= batchRows) {
          rows += batches.get(end).getLength();
          end++;
        }
        out.add(
            end == i + 1
                ? retained(batches.get(i))
                : joined(batches.subList(i, end), schema, allocator));
        i = end;
      }
      return out;
    } catch (RuntimeException | Error e) {
      out.forEach(ArrowRecordBatch::close);
      throw e;
    }
  }

  private static ArrowRecordBatch retained(ArrowRecordBatch batch) {
    return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers());
  }

  private static ArrowRecordBatch joined(
      List<ArrowRecordBatch> run, Schema schema, BufferAllocator allocator) {
    try (VectorSchemaRoot target = VectorSchemaRoot.create(schema, allocator);
        VectorSchemaRoot source = VectorSchemaRoot.create(schema, allocator)) {
      // The appender extends what the target holds: give it empty buffers to extend.
      target.allocateNew();
      VectorLoader loader = new VectorLoader(source);
      for (ArrowRecordBatch batch : run) {
        loader.load(batch);
        VectorSchemaRootAppender.append(false, target, source);
      }
      return new VectorUnloader(target).getRecordBatch();
    }
  }
}
