package io.floe.iceberg;

import io.floe.arrow.ArrowSchemas;
import io.floe.arrow.BatchCoalescer;
import io.floe.arrow.BatchPacker;
import io.floe.arrow.RecordBatchBuilder;
import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.store.AllocatorReaper;
import io.floe.store.LoadedSlice;
import io.floe.table.StorageFailures;
import io.floe.table.TableAccess;
import io.floe.util.Excerpt;
import io.floe.util.Sizes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;

/**
 * Decodes a slice's Parquet row groups into Arrow record batches under a fresh child of the node's
 * allocator. Batches are built in scratch memory, then packed into one allocation, so the slice
 * holds about one byte per byte served. On any failure every byte it took is returned before the
 * exception leaves.
 */
public final class SliceLoader {
  /** How a slice's file tasks were decoded, as {@code status} reports it. */
  public static final String VECTORIZED = "vectorized";

  /** Decoded by Arrow's C++ Parquet reader ({@link NativeTaskReader}). */
  public static final String NATIVE = "native";

  public static final String GENERIC = "generic";
  public static final String MIXED = "mixed";

  private final BufferAllocator nodeAllocator;
  private final TableAccess tables;
  private final AllocatorReaper reaper;
  private final Decoders decoders;
  private final RowGroupExcerpts excerpts;

  /** The fastest decoders a loader may use; each file task falls back to the next that takes it. */
  public enum Decoders {
    /** The generic row reader only. */
    GENERIC,
    /**
     * Iceberg's vectorized Parquet reader for the tasks that allow it (flat columns, no delete
     * files, a filter the partition decides), the generic row reader for the rest.
     */
    VECTORIZED,
    /**
     * Arrow's C++ Parquet reader for runs the vectorized reader would take and whose columns decode
     * as the served types: whole local files where they lie, any other run from an excerpt when the
     * loader has {@link RowGroupExcerpts}; then as {@link #VECTORIZED}.
     */
    NATIVE
  }

  /**
   * @param vectorized decode the tasks that allow it with Iceberg's vectorized Parquet reader (flat
   *     columns, no delete files, a filter the partition decides); the generic row reader does the
   *     rest, and all of it when this is off
   */
  public SliceLoader(
      BufferAllocator nodeAllocator,
      TableAccess tables,
      AllocatorReaper reaper,
      boolean vectorized) {
    this(nodeAllocator, tables, reaper, vectorized ? Decoders.VECTORIZED : Decoders.GENERIC);
  }

  public SliceLoader(
      BufferAllocator nodeAllocator,
      TableAccess tables,
      AllocatorReaper reaper,
      Decoders decoders) {
    this(nodeAllocator, tables, reaper, decoders, null);
  }

  /**
   * @param excerpts with {@link Decoders#NATIVE}, where the row groups of files split across slices
   *     or on object stores are copied for the native reader; null leaves such files to the
   *     vectorized reader
   */
  public SliceLoader(
      BufferAllocator nodeAllocator,
      TableAccess tables,
      AllocatorReaper reaper,
      Decoders decoders,
      RowGroupExcerpts excerpts) {
    this.nodeAllocator = nodeAllocator;
    this.tables = tables;
    this.reaper = reaper;
    this.decoders = decoders;
    this.excerpts = decoders == Decoders.NATIVE ? excerpts : null;
  }

  /**
   * Loads what the first load would otherwise load itself: the native reader's library, when this
   * loader may use it. Never throws; a library that cannot be loaded is logged once, and loads go
   * to the vectorized reader.
   */
  public void prepare() {
    if (decoders == Decoders.NATIVE) {
      NativeTaskReader.available();
    }
  }

  /**
   * @throws io.floe.table.StorageFailure when a data or delete file is missing, refused or cannot
   *     be decoded, naming it
   * @throws FloeException RESOURCE_EXHAUSTED when the node's Arrow memory cannot hold the slice
   */
  public LoadedSlice load(SliceSpec spec) {
    SliceRecords records = new SliceRecords(tables.io(spec.source()), spec, excerpts);
    BufferAllocator sliceAllocator =
        nodeAllocator.newChildAllocator("slice " + spec.sliceId(), 0, Long.MAX_VALUE);
    List<ArrowRecordBatch> built = new ArrayList<>();
    List<ArrowRecordBatch> joined = List.of();
    List<ArrowRecordBatch> packed = List.of();
    Schema schema = ArrowSchemas.fromIceberg(records.requested());
    try (BufferAllocator scratch =
        nodeAllocator.newChildAllocator("scratch " + spec.sliceId(), 0, Long.MAX_VALUE)) {
      String decoder;
      try {
        decoder = buildBatches(records, spec.batchRows(), scratch, sliceAllocator, built);
        joined = BatchCoalescer.coalesce(built, schema, spec.batchRows(), scratch);
        built.forEach(ArrowRecordBatch::close);
        built.clear();
        packed = packInto(joined, sliceAllocator);
      } finally {
        built.forEach(ArrowRecordBatch::close);
        joined.forEach(ArrowRecordBatch::close);
      }
      return new LoadedSlice(spec.sliceId(), schema, packed, sliceAllocator, reaper, decoder);
    } catch (RuntimeException | Error e) {
      packed.forEach(ArrowRecordBatch::close);
      sliceAllocator.close();
      OutOfMemoryException full = outOfMemory(e);
      if (full != null) {
        throw memoryFull(full);
      }
      throw e;
    }
  }

  /**
   * The batches with all their buffers in {@code slice}: those already there (natively decoded,
   * joined by nothing) are kept where they are, the rest are packed into one allocation of it. The
   * caller still owns (and closes) {@code batches}.
   */
  private static List<ArrowRecordBatch> packInto(
      List<ArrowRecordBatch> batches, BufferAllocator slice) {
    List<ArrowRecordBatch> elsewhere = new ArrayList<>();
    for (ArrowRecordBatch batch : batches) {
      if (!heldBy(batch, slice)) {
        elsewhere.add(batch);
      }
    }
    List<ArrowRecordBatch> copies = BatchPacker.pack(elsewhere, slice);
    java.util.Iterator<ArrowRecordBatch> copied = copies.iterator();
    List<ArrowRecordBatch> packed = new ArrayList<>(batches.size());
    for (ArrowRecordBatch batch : batches) {
      packed.add(
          heldBy(batch, slice)
              ? new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers())
              : copied.next());
    }
    return packed;
  }

  private static boolean heldBy(ArrowRecordBatch batch, BufferAllocator allocator) {
    for (org.apache.arrow.memory.ArrowBuf buffer : batch.getBuffers()) {
      if (buffer.capacity() > 0 && buffer.getReferenceManager().getAllocator() != allocator) {
        return false;
      }
    }
    return true;
  }

  private static OutOfMemoryException outOfMemory(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof OutOfMemoryException full) {
        return full;
      }
    }
    return null;
  }

  /** How Arrow's refusal names the buffer it could not allocate. */
  private static final java.util.regex.Pattern REQUESTED =
      java.util.regex.Pattern.compile("buffer of size (\\d+)");

  /**
   * Arrow's refusal in terms an operator can act on: what the slice asked for, what the node has
   * free and holds of its limit, and by which setting it is raised (Arrow's own text names one
   * buffer and the allocator's total).
   */
  private FloeException memoryFull(OutOfMemoryException arrow) {
    long held = nodeAllocator.getAllocatedMemory();
    long limit = nodeAllocator.getLimit();
    String message = String.valueOf(arrow.getMessage());
    java.util.regex.Matcher requested = REQUESTED.matcher(message);
    String needed =
        requested.find()
            ? "needed " + Sizes.exactly(Long.parseLong(requested.group(1))) + " more"
            : "needed more";
    return new FloeException(
        ErrorKind.RESOURCE_EXHAUSTED,
        String.format(
            "The node's Arrow memory is full: this slice %s while decoding, and the node has"
                + " %s free now, %s of its %s memory limit held"
                + " (floe.memory.limit, FLOE_MEMORY_LIMIT) by slices, loads in flight and streams; drop datasets,"
                + " load fewer columns or rows, or give the nodes more memory (Arrow: %s)",
            needed,
            Sizes.exactly(Math.max(0, limit - held)),
            Sizes.exactly(held),
            Sizes.exactly(limit),
            message),
        arrow);
  }

  private static String describe(FileScanTask task) {
    String what = "data file '" + Excerpt.location(task.file().location()) + "'";
    if (!task.deletes().isEmpty()) {
      what += " (or one of its " + task.deletes().size() + " delete files)";
    }
    return what;
  }

  /**
   * Decodes every task of the slice in order into {@code out}: natively or vectorized where it can,
   * else row by row; answers which did it ({@link #MIXED} for more than one).
   */
  private String buildBatches(
      SliceRecords records,
      int batchRows,
      BufferAllocator scratch,
      BufferAllocator sliceAllocator,
      List<ArrowRecordBatch> out) {
    List<FileScanTask> tasks = records.tasks();
    if (tasks.isEmpty()) {
      return GENERIC;
    }
    int natively = 0;
    int fast = 0;
    int genericUntil = 0;
    boolean vectorized = decoders != Decoders.GENERIC;
    try (RecordBatchBuilder builder =
        new RecordBatchBuilder(
            scratch,
            records.requested(),
            records.recordSchema(tasks.get(0)).asStruct(),
            batchRows)) {
      for (int t = 0; t < tasks.size(); t++) {
        FileScanTask task = tasks.get(t);
        if (vectorized && t >= genericUntil && records.vectorizable(task)) {
          // The following row groups of the same file go in the same read: one footer, one
          // reader.
          int end = t + 1;
          while (end < tasks.size()
              && tasks.get(end).file().location().equals(task.file().location())
              && tasks.get(end).start() == tasks.get(end - 1).start() + tasks.get(end - 1).length()
              && records.vectorizable(tasks.get(end))) {
            end++;
          }
          List<FileScanTask> run = tasks.subList(t, end);
          java.util.Optional<List<ArrowRecordBatch>> decoded = java.util.Optional.empty();
          if (decoders == Decoders.NATIVE && records.nativelyReadable(run)) {
            // Natively decoded batches are copied once, from Arrow's import straight into the
            // slice's memory, each in one exact allocation; packing leaves them there.
            decoded = records.decodedNatively(run, batchRows, sliceAllocator);
            if (decoded.isPresent()) {
              natively += run.size();
            }
          }
          try {
            if (decoded.isEmpty()) {
              decoded = records.vectorized(run, batchRows, scratch);
            }
          } catch (RuntimeException e) {
            throw StorageFailures.translateReading(e, describe(task));
          }
          if (decoded.isPresent()) {
            if (builder.rows() > 0) {
              out.add(builder.finish()); // rows stay in order: the generic rows before it first
            }
            out.addAll(decoded.get());
            fast += run.size();
            t = end - 1;
            continue;
          }
          genericUntil = end;
        }
        builder.source(records.recordSchema(task).asStruct());
        try (CloseableIterable<Record> rows = records.open(task)) {
          for (Record row : rows) {
            if (builder.add(row)) {
              out.add(builder.finish());
            }
          }
        } catch (IOException | RuntimeException e) {
          throw StorageFailures.translateReading(e, describe(task));
        }
      }
      if (builder.rows() > 0) {
        out.add(builder.finish());
      }
    }
    if (fast == 0) {
      return GENERIC;
    }
    if (fast < tasks.size()) {
      return MIXED;
    }
    return natively == fast ? NATIVE : natively == 0 ? VECTORIZED : MIXED;
  }
}
