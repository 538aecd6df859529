package io.floe.gateway.job;

import io.floe.store.LoadedSlice;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.TransferPair;

/**
 * Copies chosen rows of some held slices of one dataset, in a given order, into a new record batch
 * of some of their columns. The slices' batches are viewed by reference (loaded into roots that
 * share their buffers) the first time a row of theirs is needed; only the chosen rows are copied.
 * Closing releases the views; the batches it made belong to their callers.
 *
 * <p>Rows are located one part at a time, on one thread; the parts they were located for may then
 * be gathered on other threads, side by side with each other and with the locating of later parts,
 * each with its own {@link GatherScratch} and the {@link #copiers()} of its locating's time.
 */
final class RowGather implements AutoCloseable {
  private final List<LoadedSlice> slices;
  private final Schema projected;
  private final int[] sourceColumns;

  /** firstSource[l]: the index of slice l's first batch among all the sources. */
  private final int[] firstSource;

  /** sourceRows[b]: source batch b's row count; firstRow[b]: the rows of all batches before b. */
  private final int[] sourceRows;

  private final long[] firstRow;

  private final VectorSchemaRoot[] views;

  /**
   * sliceable[b]: whether source batch b's columns have the projected types, so that a part of it
   * can be served by reference; decided once, when the batch is first viewed.
   */
  private final boolean[] sliceable;

  /** columnViews[c][b]: the view of projected column c in source batch b, once loaded. */
  private final FieldVector[][] columnViews;

  /** direct[c]: the direct copier of projected column c, or null where Arrow's copy is used. */
  private final ColumnGather[] direct;

  /** The rows of {@code slices}, which share their schema (they are slices of one dataset). */
  RowGather(List<LoadedSlice> slices, Schema projected) {
    this.slices = List.copyOf(slices);
    this.projected = projected;
    this.sourceColumns = new int[projected.getFields().size()];
    LoadedSlice first = slices.get(0);
    List<Field> sliceFields = first.schema().getFields();
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
        throw new IllegalStateException("Slice " + first.sliceId() + " has no column " + name);
      }
      sourceColumns[c] = index;
    }
    this.firstSource = new int[slices.size() + 1];
    for (int l = 0; l < slices.size(); l++) {
      firstSource[l + 1] = firstSource[l] + slices.get(l).batches().size();
    }
    int sources = firstSource[slices.size()];
    this.sourceRows = new int[sources];
    this.firstRow = new long[sources];
    long rows = 0;
    for (int l = 0; l < slices.size(); l++) {
      List<ArrowRecordBatch> batches = slices.get(l).batches();
      for (int b = 0; b < batches.size(); b++) {
        sourceRows[firstSource[l] + b] = batches.get(b).getLength();
        firstRow[firstSource[l] + b] = rows;
        rows += batches.get(b).getLength();
      }
    }
    this.views = new VectorSchemaRoot[sources];
    this.sliceable = new boolean[sources];
    this.columnViews = new FieldVector[sourceColumns.length][sources];
    this.direct = new ColumnGather[sourceColumns.length];
  }

  /**
   * Notes where rows {@code row, …, row + n − 1} of slice {@code local} (an index into this
   * gather's slices) are: {@code source[i + t]} and {@code indexIn[i + t]} are set for {@link
   * #gather}.
   */
  void locate(int local, long row, int n, int[] source, int[] indexIn, int i) {
    LoadedSlice slice = slices.get(local);
    int t = 0;
    while (t < n) {
      int batch = slice.batchOf(row + t);
      int flat = firstSource[local] + batch;
      if (views[flat] == null) {
        view(local, batch, flat);
      }
      int first = (int) (row + t - slice.batchStart(batch));
      // At least one: a row past the slice's end is noted as it is, for the gather to refuse.
      int inBatch = Math.max(1, Math.min(n - t, sourceRows[flat] - first));
      for (int k = 0; k < inBatch; k++) {
        source[i + t + k] = flat;
        indexIn[i + t + k] = first + k;
      }
      t += inBatch;
    }
  }

  /**
   * A new batch of {@code count} rows: row {@code i} is row {@code indexIn[i]} of source batch
   * {@code source[i]}, as {@link #locate} set them.
   */
  VectorSchemaRoot gather(
      int[] source,
      int[] indexIn,
      int count,
      BufferAllocator allocator,
      GatherScratch scratch,
      ColumnGather[] direct) {
    GatherRuns runs = GatherRuns.of(source, indexIn, count, sourceRows, firstRow, scratch);
    if (runs.runs() == 1 && sliceable[runs.source(0)]) {
      return sliced(runs.source(0), runs.from(0), count);
    }
    VectorSchemaRoot out = VectorSchemaRoot.create(projected, allocator);
    try {
      List<FieldVector> targets = out.getFieldVectors();
      for (int c = 0; c < sourceColumns.length; c++) {
        FieldVector target = targets.get(c);
        if (direct[c] != null) {
          direct[c].gather(target, runs);
          continue;
        }
        // Arrow's copies fill a vector in order (offsets, lists, structs), so in the part's order.
        // Sized to the rows at hand: Arrow's default capacity (thousands of values per vector)
        // would cost more than the copy.
        target.setInitialCapacity(Math.max(1, count));
        target.allocateNew();
        FieldVector[] sources = columnViews[c];
        // Arrow copies a nested value through its source vector's one reader (copyFrom moves it
        // to the row), so two gathers of this stream running at once must not copy a column from
        // the same views together: they take turns, column by column.
        synchronized (sources) {
          if (target instanceof BaseFixedWidthVector && count > 0) {
            // Capacity is already count: no per-value capacity checks needed.
            for (int i = 0; i < count; i++) {
              target.copyFrom(indexIn[i], i, sources[source[i]]);
            }
          } else {
            for (int i = 0; i < count; i++) {
              target.copyFromSafe(indexIn[i], i, sources[source[i]]);
            }
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

  /**
   * The direct copier of each projected column as the rows located so far need them: a part must be
   * gathered with those of its locating's time, since locating later parts may add copiers of
   * columns it copies Arrow's way.
   */
  ColumnGather[] copiers() {
    return direct.clone();
  }

  /**
   * Whether source batch {@code flat}'s columns have the projected columns' types, children
   * included (not their names: a list's child is named as Arrow names it, {@code $data$}).
   */
  private boolean sameFields(int flat) {
    for (int c = 0; c < sourceColumns.length; c++) {
      if (!sameType(columnViews[c][flat].getField(), projected.getFields().get(c))) {
        return false;
      }
    }
    return true;
  }

  private static boolean sameType(Field a, Field b) {
    if (!a.getType().equals(b.getType()) || a.getChildren().size() != b.getChildren().size()) {
      return false;
    }
    for (int i = 0; i < a.getChildren().size(); i++) {
      if (!sameType(a.getChildren().get(i), b.getChildren().get(i))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Rows {@code [from, from + count)} of one source batch (an ordered job's part is nearly always
   * one such run) by reference, as the plain stream serves a cut batch: Arrow's split shares the
   * values' buffers and copies only what cannot be shared, validity bits not starting on a byte and
   * offsets that must start at 0. Under the source slice's own allocator: a split into another
   * would move the shared buffers' accounting there.
   */
  private VectorSchemaRoot sliced(int flat, int from, int count) {
    List<FieldVector> parts = new ArrayList<>(sourceColumns.length);
    try {
      for (int c = 0; c < sourceColumns.length; c++) {
        FieldVector column = columnViews[c][flat];
        TransferPair split = column.getTransferPair(column.getAllocator());
        split.splitAndTransfer(from, count);
        parts.add((FieldVector) split.getTo());
      }
      return new VectorSchemaRoot(projected.getFields(), parts, count);
    } catch (RuntimeException e) {
      parts.forEach(FieldVector::close);
      throw e;
    }
  }

  private void view(int local, int batch, int flat) {
    LoadedSlice slice = slices.get(local);
    VectorSchemaRoot view = VectorSchemaRoot.create(slice.schema(), slice.allocator());
    new VectorLoader(view).load(slice.batches().get(batch));
    views[flat] = view;
    for (int c = 0; c < sourceColumns.length; c++) {
      FieldVector column = view.getVector(sourceColumns[c]);
      columnViews[c][flat] = column;
      // Only where the source has the type of the batches made (the copy does not check).
      if (ColumnGather.handles(column)
          && column.getField().getType().equals(projected.getFields().get(c).getType())) {
        if (direct[c] == null) {
          direct[c] = new ColumnGather(views.length);
        }
        direct[c].add(flat, column);
      }
    }
    sliceable[flat] = sameFields(flat);
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
