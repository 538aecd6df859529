package io.floe.gateway;

import io.floe.slice.LoadedSlice;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
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

  RowGather(LoadedSlice slice, Schema projected) {
    this.slice = slice;
    this.projected = projected;
    this.sourceColumns = new int[projected.getFields().size()];
    List<Field> sliceFields = slice.schema().getFields();
    for (int c = 0; c < sourceColumns.length; c++) {
      String name = projected.getFields().get(c).getName();
      int index = -1;
      for (int i = 0; i < sliceFields.size(); i++) {
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
  }

  /** A new batch holding rows {@code rows[0..count)} of the slice (slice-relative), in order. */
  VectorSchemaRoot gather(long[] rows, int count, BufferAllocator allocator) {
    VectorSchemaRoot out = VectorSchemaRoot.create(projected, allocator);
    try {
      List<FieldVector> targets = out.getFieldVectors();
      if (count > 0) {
        // Sized to the rows at hand: most parts are small, many are empty, and Arrow's default
        // capacity (thousands of values per vector) would cost more than the copy.
        for (FieldVector target : targets) {
          target.setInitialCapacity(count);
          target.allocateNew();
        }
      }
      for (int i = 0; i < count; i++) {
        int batch = slice.batchOf(rows[i]);
        int index = (int) (rows[i] - slice.batchStart(batch));
        VectorSchemaRoot view = view(batch);
        for (int c = 0; c < sourceColumns.length; c++) {
          targets.get(c).copyFromSafe(index, i, view.getVector(sourceColumns[c]));
        }
      }
      out.setRowCount(count);
      return out;
    } catch (RuntimeException e) {
      out.close();
      throw e;
    }
  }

  private VectorSchemaRoot view(int batch) {
    VectorSchemaRoot view = views.get(batch);
    if (view == null) {
      view = VectorSchemaRoot.create(slice.schema(), slice.allocator());
      new VectorLoader(view).load(slice.batches().get(batch));
      views.set(batch, view);
    }
    return view;
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
