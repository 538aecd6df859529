package io.floe.arrow;

import io.floe.util.Preconditions;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.types.Types;

/**
 * Accumulates Iceberg records into Arrow vectors and cuts them into record batches of at most
 * {@code batchRows} rows. The batches it hands out own their buffers; the builder's own vectors are
 * freed by {@link #close()}.
 */
public final class RecordBatchBuilder implements AutoCloseable {
  private static final int INITIAL_ROWS = 4_096;
  private final VectorSchemaRoot root;
  private final org.apache.iceberg.Schema requested;
  private ValueWriters.StructWriter writer;
  private final int batchRows;
  private int rows;
  private boolean cleared;

  /**
   * @param requested the columns the batches hold
   * @param source the struct type of the records that will be added (a superset of requested)
   */
  public RecordBatchBuilder(
      BufferAllocator allocator,
      org.apache.iceberg.Schema requested,
      Types.StructType source,
      int batchRows) {
    Preconditions.checkArgument(batchRows > 0, "Invalid batch rows: %s (must be > 0)", batchRows);
    this.root = VectorSchemaRoot.create(ArrowSchemas.fromIceberg(requested), allocator);
    this.batchRows = batchRows;
    this.requested = requested;
    try {
      this.writer = ValueWriters.struct(root.getFieldVectors(), requested.asStruct(), source);
      allocate();
    } catch (RuntimeException e) {
      root.close(); // over the memory limit already: give back what the first vectors took
      throw e;
    }
  }

  /**
   * Switches the layout of the records added from now on (files of one slice may differ in the
   * columns their delete files need) without cutting the batch.
   */
  public void source(Types.StructType source) {
    this.writer = ValueWriters.struct(root.getFieldVectors(), requested.asStruct(), source);
  }

  private void allocate() {
    // Vectors grow as rows arrive; starting small keeps tiny slices from reserving a full batch.
    int initial = Math.min(batchRows, INITIAL_ROWS);
    for (FieldVector vector : root.getFieldVectors()) {
      vector.setInitialCapacity(initial);
      vector.allocateNew();
    }
  }

  /** Adds a record; answers true when the batch is full and should be {@link #finish() cut}. */
  public boolean add(StructLike record) {
    if (cleared) {
      allocate();
      cleared = false;
    }
    writer.write(rows, record);
    rows++;
    return rows >= batchRows;
  }

  public int rows() {
    return rows;
  }

  /**
   * Cuts the rows added so far into a batch the caller owns. It allocates nothing, so a batch once
   * cut always reaches the caller; the next {@link #add} allocates fresh vectors.
   */
  public ArrowRecordBatch finish() {
    root.setRowCount(rows);
    ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch();
    root.clear();
    rows = 0;
    cleared = true;
    return batch;
  }

  @Override
  public void close() {
    root.close();
  }
}
