package io.floe.iceberg;

import io.floe.arrow.ArrowSchemas;
import io.floe.error.FloeException;
import io.floe.filter.RowPredicate;
import io.floe.table.StorageFailures;
import io.floe.util.Excerpt;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.OutOfMemoryException;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ScanTaskParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.util.PartitionUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the live rows of one slice as Iceberg generic records: position and equality deletes are
 * applied, then the row filter row by row with SQL's null semantics ({@link RowPredicate}; planning
 * only pruned files and row groups with it). Records carry the requested columns plus whatever the
 * filter and deletes needed; {@link #recordType(FileScanTask)} tells their layout.
 */
public final class SliceRecords {
  private static final Logger LOG = LoggerFactory.getLogger(SliceRecords.class);

  private final FileIO io;
  private final Schema requested;

  /** The requested columns as Arrow serves them, which the columnar readers decode into. */
  private final List<Field> served;

  private final Expression filter;
  private final String nameMappingJson;
  private final List<FileScanTask> tasks;

  /** Where the native reader copies row groups it cannot decode in place; null: nowhere. */
  private final RowGroupExcerpts excerpts;

  public SliceRecords(FileIO io, SliceSpec spec) {
    this(io, spec, null);
  }

  /**
   * @param excerpts where the native reader's excerpts of files split across slices or on object
   *     stores are written, or null to leave such files to the vectorized reader
   */
  public SliceRecords(FileIO io, SliceSpec spec, RowGroupExcerpts excerpts) {
    this.io = io;
    this.excerpts = excerpts;
    this.requested = SchemaParser.fromJson(spec.requestedSchemaJson());
    this.served = ArrowSchemas.fromIceberg(requested).getFields();
    this.nameMappingJson = spec.nameMappingJson();
    List<FileScanTask> parsed = new ArrayList<>(spec.taskJsons().size());
    for (String json : spec.taskJsons()) {
      parsed.add(ScanTaskParser.fromJson(json, true));
    }
    this.tasks = List.copyOf(parsed);
    // The filter was written bound, with typed values: read them back against the table schema.
    this.filter =
        tasks.isEmpty()
            ? Expressions.alwaysTrue()
            : ExpressionParser.fromJson(spec.filterJson(), tasks.get(0).schema());
  }

  public Schema requested() {
    return requested;
  }

  /** Whether {@code task} can be decoded with the vectorized reader (see {@link #vectorized}). */
  public boolean vectorizable(FileScanTask task) {
    return VectorizedTaskReader.accepts(task, requested, filter);
  }

  /**
   * The rows of a run of consecutive tasks of one file (one reader for all its row groups) decoded
   * column by column with Iceberg's vectorized Parquet reader into batches of at most {@code
   * batchRows} rows under {@code allocator}, or empty when a column comes out in a form the served
   * type cannot take (then nothing is left allocated, and the tasks are for {@link #open}). Only
   * for tasks {@link #vectorizable}.
   */
  public Optional<List<ArrowRecordBatch>> vectorized(
      List<FileScanTask> run, int batchRows, BufferAllocator allocator) {
    try {
      return Optional.of(
          VectorizedTaskReader.read(
              io, run, requested, served, nameMappingJson, batchRows, allocator));
    } catch (UnsupportedOperationException e) {
      LOG.debug(
          "Task of {} read by the generic reader: {}",
          run.get(0).file().location(),
          e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * Whether a run of {@link #vectorizable} tasks of one file can be decoded by Arrow's C++ Parquet
   * reader instead (see {@link #decodedNatively}): the native library loaded, and a local file read
   * whole or, with excerpts, any part of any file.
   */
  public boolean nativelyReadable(List<FileScanTask> run) {
    if (!NativeTaskReader.available()) {
      return false;
    }
    return NativeTaskReader.wholeLocalFile(run) || excerpts != null;
  }

  /**
   * The rows of a run of one file decoded by Arrow's C++ Parquet reader into batches of at most
   * {@code batchRows} rows under {@code allocator}: a local file where it lies when the run is all
   * of it, else an excerpt of the run's row groups. Empty when a column comes out in a type the
   * served one is not, or the native reader fails (then nothing is left allocated, and the run is
   * for {@link #vectorized}, which reports a bad file as such). Only for runs {@link
   * #nativelyReadable}.
   *
   * @throws OutOfMemoryException when the batches do not fit
   */
  public Optional<List<ArrowRecordBatch>> decodedNatively(
      List<FileScanTask> run, int batchRows, BufferAllocator allocator) {
    try {
      return Optional.of(
          NativeTaskReader.wholeLocalFile(run)
              ? NativeTaskReader.read(
                  io, run, requested, served, nameMappingJson, batchRows, allocator)
              : NativeTaskReader.readRowGroups(
                  io, excerpts, run, requested, served, nameMappingJson, batchRows, allocator));
    } catch (OutOfMemoryException | FloeException e) {
      throw e;
    } catch (NativeTaskReader.SourceUnreadable e) {
      throw StorageFailures.translateReading(
          e.getCause(), "data file '" + Excerpt.location(location(run)) + "'");
    } catch (RuntimeException e) {
      // The C data import wraps what it meets (IllegalArgumentException): a full node is full
      // whichever reader asks, so that is not a reason to try the next one.
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof OutOfMemoryException) {
          throw e;
        }
      }
      LOG.debug("{} read by the vectorized reader: {}", location(run), e.toString());
      return Optional.empty();
    }
  }

  private static String location(List<FileScanTask> run) {
    return run.get(0).file().location();
  }

  public List<FileScanTask> tasks() {
    return tasks;
  }

  /**
   * The columns read from a task's file: requested plus the filter's, selected by field id from the
   * task's schema, so a filter on {@code a.b} joins a served struct {@code a} instead of clashing
   * with it. Ids are leaves, list elements and map keys and values ({@link
   * TypeUtil#getProjectedIds}): Iceberg refuses to project a list or map by its own id.
   */
  private Schema readSchema(FileScanTask task) {
    if (filter.equals(Expressions.alwaysTrue())) {
      return requested;
    }
    Set<Integer> ids = new HashSet<>(TypeUtil.getProjectedIds(requested));
    for (int id : Binder.boundReferences(task.schema().asStruct(), List.of(filter), true)) {
      Type type = task.schema().findType(id);
      if (type != null && type.isNestedType()) {
        // "addr is null" needs the struct (or list, or map) itself read, which takes its fields.
        ids.addAll(TypeUtil.getProjectedIds(type));
      } else {
        ids.add(id);
      }
    }
    return TypeUtil.project(task.schema(), ids);
  }

  /** The records' layout for a task, which the Arrow writer maps columns through. */
  public Schema recordSchema(FileScanTask task) {
    return new GenericDeleteFilter(io, task, task.schema(), readSchema(task)).requiredSchema();
  }

  /** Live, filtered rows of one task; the caller closes the iterable. */
  public CloseableIterable<Record> open(FileScanTask task) {
    GenericDeleteFilter deletes =
        new GenericDeleteFilter(io, task, task.schema(), readSchema(task));
    Schema fileProjection = deletes.requiredSchema();
    Parquet.ReadBuilder builder =
        Parquet.read(io.newInputFile(task.file().location()))
            .project(fileProjection)
            .split(task.start(), task.length())
            .filter(task.residual())
            .createReaderFunc(
                fileSchema ->
                    GenericParquetReaders.buildReader(
                        fileProjection,
                        fileSchema,
                        PartitionUtil.constantsMap(
                            task, IdentityPartitionConverters::convertConstant)));
    if (nameMappingJson != null) {
      builder.withNameMapping(NameMappingParser.fromJson(nameMappingJson));
    }
    CloseableIterable<Record> records = deletes.filter(builder.build());
    if (filter.equals(Expressions.alwaysTrue())) {
      return records;
    }
    RowPredicate predicate = new RowPredicate(fileProjection.asStruct(), filter);
    return CloseableIterable.filter(records, predicate::test);
  }
}
