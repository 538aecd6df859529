package io.floe.iceberg;

import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import io.floe.store.AllocatorReaper;
import io.floe.store.LoadedSlice;
import io.floe.table.TableAccess;
import io.floe.testing.ArrowRecords;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.data.Record;

/** Plans a dataset, loads every slice as a node would, and reads the batches back as records. */
public final class SliceReads implements AutoCloseable {
  private final TableAccess tables;
  private final SlicePlanner planner;
  private final SliceLoader loader;
  private final BufferAllocator allocator;
  private final AllocatorReaper reaper = new AllocatorReaper();

  public SliceReads(TableAccess tables, BufferAllocator allocator, long sliceTargetBytes) {
    this(tables, allocator, sliceTargetBytes, true);
  }

  /** With {@code vectorized} off every slice is decoded by the generic row reader. */
  public SliceReads(
      TableAccess tables, BufferAllocator allocator, long sliceTargetBytes, boolean vectorized) {
    this(
        tables,
        allocator,
        sliceTargetBytes,
        vectorized ? SliceLoader.Decoders.VECTORIZED : SliceLoader.Decoders.GENERIC);
  }

  /** Decoding with at best {@code decoders}, each task falling back as a node's loader does. */
  public SliceReads(
      TableAccess tables,
      BufferAllocator allocator,
      long sliceTargetBytes,
      SliceLoader.Decoders decoders) {
    this(tables, allocator, sliceTargetBytes, decoders, null);
  }

  /** As a node's loader with its native reader's excerpts in {@code excerpts} (or none). */
  public SliceReads(
      TableAccess tables,
      BufferAllocator allocator,
      long sliceTargetBytes,
      SliceLoader.Decoders decoders,
      RowGroupExcerpts excerpts) {
    this.tables = tables;
    this.allocator = allocator;
    this.planner = new SlicePlanner(sliceTargetBytes);
    this.loader = new SliceLoader(allocator, tables, reaper, decoders, excerpts);
  }

  /** Which reader decoded each slice (native, vectorized, generic, mixed), in plan order. */
  public List<String> decoders(DatasetSpec spec) {
    List<String> decoders = new ArrayList<>();
    for (SliceSpec sliceSpec : plan(spec).slices()) {
      LoadedSlice slice = loader.load(sliceSpec);
      decoders.add(slice.decoder());
      slice.release();
    }
    return decoders;
  }

  public ScanPlan plan(DatasetSpec spec) {
    TableSource source = tables.resolve(spec.table(), spec.catalog());
    return planner.plan(source, tables.open(source), spec, 1);
  }

  /** The Arrow memory every slice of the dataset holds once loaded, in all. */
  public long heldBytes(DatasetSpec spec) {
    long held = 0;
    for (SliceSpec sliceSpec : plan(spec).slices()) {
      LoadedSlice slice = loader.load(sliceSpec);
      try {
        held += slice.allocator().getAllocatedMemory();
      } finally {
        slice.release();
      }
    }
    return held;
  }

  /** The served rows in global (plan) order; every slice is released before returning. */
  public List<Record> readAll(DatasetSpec spec) {
    ScanPlan plan = plan(spec);
    List<Record> rows = new ArrayList<>();
    for (SliceSpec sliceSpec : plan.slices()) {
      LoadedSlice slice = loader.load(sliceSpec);
      try {
        rows.addAll(read(slice, SchemaParser.fromJson(sliceSpec.requestedSchemaJson())));
      } finally {
        slice.release();
      }
    }
    return rows;
  }

  public List<Record> read(LoadedSlice slice, Schema schema) {
    List<Record> rows = new ArrayList<>();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(slice.schema(), allocator)) {
      VectorLoader vectorLoader = new VectorLoader(root);
      for (ArrowRecordBatch batch : slice.batches()) {
        vectorLoader.load(batch);
        rows.addAll(ArrowRecords.read(root, schema));
      }
    }
    return rows;
  }

  @Override
  public void close() {
    reaper.close();
  }
}
