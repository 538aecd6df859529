package io.floe.gateway.job;

import io.floe.store.LoadedSlice;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Copies chosen rows of a held slice, in a given order, into a new record batch of some of its
 * columns. The slice's batches are viewed by reference (loaded into roots that share its buffers)
 * the first time a row of theirs is needed; only the chosen rows are copied. Closing releases the
 * views; the batches it made belong to their callers.
 */
final class RowGather implements AutoCloseable {
  private final LoadedSlice slice;
  private final Schema projected;
  private final int[] sourceColumns;
  private final List<VectorSchemaRoot> views;

  /** columnViews[c][b]: the view of projected column c in slice batch b, once loaded. */
  private final FieldVector[][] columnViews;

  /** direct[c]: the direct copier of projected column c, or null where Arrow's copy is used. */
  private final ColumnGather[] direct;

  RowGather(LoadedSlice slice, Schema projected) {
    this.slice = slice;
    this.projected = projected;
    this.sourceColumns = new int[projected.getFields().size()];
    List<Field> sliceFields = slice.schema().getFields();
    for (int c = 0; c < sourceColumns.length; c++) {
      String name = projected.getFields().get(c).getName();
      int index = -1;
      // The first field of that name, as the projection (Schema.findField) takes it.
      for (int i = 0; i < sliceFields.size() && index < 0; i++) {
        if (sliceFields.get(i).getName().equals(name)) {
          index = i;
        }
      }
      if (index < 0) {
        throw new IllegalStateException("Slice " + slice.sliceId() + " has no column " + name);
      }
      sourceColumns[c] = index;
    }
    this.views = new ArrayList<>(java.util.Collections.nCopies(slice.batches().size(), null));
    this.columnViews = new FieldVector[sourceColumns.length][slice.batches().size()];
    this.direct = new ColumnGather[sourceColumns.length];
  }

  /**
   * A new batch holding rows {@code rows[offset .. offset + count)} of the slice (slice-relative),
   * in order.
   */
  VectorSchemaRoot gather(long[] rows, int offset, int count, BufferAllocator allocator) {
    VectorSchemaRoot out = VectorSchemaRoot.create(projected, allocator);
    try {
      // Where each row is, found once for all columns.
      int[] batchOf = new int[count];
      int[] indexIn = new int[count];
      for (int i = 0; i < count; i++) {
        long row = rows[offset + i];
        int batch = slice.batchOf(row);
        batchOf[i] = batch;
        indexIn[i] = (int) (row - slice.batchStart(batch));
        view(batch);
      }
      List<FieldVector> targets = out.getFieldVectors();
      for (int c = 0; c < sourceColumns.length; c++) {
        FieldVector target = targets.get(c);
        if (direct[c] != null) {
          direct[c].gather(target, batchOf, indexIn, count);
          continue;
        }
        // Sized to the rows at hand: most parts are small, and Arrow's default capacity
        // (thousands of values per vector) would cost more than the copy.
        // Empty parts are allocated too: IPC expects a list's or string's offset buffer to hold at
        // least one offset.
        target.setInitialCapacity(Math.max(1, count));
        target.allocateNew();
        FieldVector[] sources = columnViews[c];
        if (target instanceof BaseFixedWidthVector && count > 0) {
          // Capacity is already count: no per-value capacity checks needed.
          for (int i = 0; i < count; i++) {
            target.copyFrom(indexIn[i], i, sources[batchOf[i]]);
          }
        } else {
          for (int i = 0; i < count; i++) {
            target.copyFromSafe(indexIn[i], i, sources[batchOf[i]]);
          }
        }
        target.setValueCount(count);
      }
      out.setRowCount(count);
      return out;
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
  }

  private void view(int batch) {
    if (views.get(batch) == null) {
      VectorSchemaRoot view = VectorSchemaRoot.create(slice.schema(), slice.allocator());
      new VectorLoader(view).load(slice.batches().get(batch));
      views.set(batch, view);
      for (int c = 0; c < sourceColumns.length; c++) {
        FieldVector column = view.getVector(sourceColumns[c]);
        columnViews[c][batch] = column;
        // Only where the source has the type of the batches made (the copy does not check).
        if (ColumnGather.handles(column)
            && column.getField().getType().equals(projected.getFields().get(c).getType())) {
          if (direct[c] == null) {
            direct[c] = new ColumnGather(views.size());
          }
          direct[c].add(batch, column);
        }
      }
    }
  }

  @Override
  public void close() {
    for (VectorSchemaRoot view : views) {
      if (view != null) {
        view.close();
      }
    }
  }
}
