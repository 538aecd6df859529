package io.floe.iceberg;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.arrow.vectorized.BaseBatchReader;
import org.apache.iceberg.arrow.vectorized.VectorHolder;
import org.apache.iceberg.arrow.vectorized.VectorizedReaderBuilder;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.ResidualEvaluator;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.parquet.TypeWithSchemaVisitor;
import org.apache.iceberg.parquet.VectorizedReader;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PartitionUtil;
import org.apache.parquet.schema.MessageType;

/**
 * Decodes one Parquet file scan task straight into Arrow vectors with Iceberg's vectorized Parquet
 * reader (column by column, page by page, no row objects), under the given allocator, with
 * Iceberg's field-id projection, name mapping and row-group pruning. {@link VectorColumns} turns
 * its vectors into the served types. For the common case only ({@link #accepts}): the generic row
 * reader stays for tasks with delete files, nested columns, constants or a row filter their
 * partition does not decide.
 */
final class VectorizedTaskReader {
  private VectorizedTaskReader() {}

  /**
   * Whether {@code task} can be read vectorized: only primitive columns the reader supports, no
   * delete files, no column filled from partition values or defaults, and a filter that holds for
   * every row of the task's partition (or none).
   */
  static boolean accepts(FileScanTask task, Schema requested, Expression typedFilter) {
    if (!task.deletes().isEmpty()) {
      return false;
    }
    for (Types.NestedField field : requested.columns()) {
      if (!supported(field.type()) || field.initialDefault() != null) {
        return false;
      }
    }
    Map<Integer, ?> constants =
        PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant);
    for (Types.NestedField field : requested.columns()) {
      if (constants.containsKey(field.fieldId())) {
        return false;
      }
    }
    if (typedFilter.equals(Expressions.alwaysTrue())) {
      return true;
    }
    StructLike partition = task.file().partition();
    for (int i = 0; i < partition.size(); i++) {
      if (partition.get(i, Object.class) == null) {
        return false; // a null partition value: SQL's unknown, which Iceberg's residual ignores
      }
    }
    return ResidualEvaluator.of(task.spec(), typedFilter, true)
        .residualFor(partition)
        .equals(Expressions.alwaysTrue());
  }

  private static boolean supported(Type type) {
    switch (type.typeId()) {
      case BOOLEAN:
      case INTEGER:
      case LONG:
      case FLOAT:
      case DOUBLE:
      case DECIMAL:
      case DATE:
      case TIME:
      case TIMESTAMP:
      case STRING:
      case UUID:
      case FIXED:
      case BINARY:
        return true;
      default:
        return false;
    }
  }

  /**
   * The rows of consecutive tasks of one file (a run of its row groups, opened once) as record
   * batches of at most {@code batchRows} rows with the {@code served} fields, allocated from {@code
   * allocator}; the caller closes them.
   *
   * @throws UnsupportedOperationException when a column comes out of the reader in a form the
   *     served type cannot take; nothing is left allocated then, and the caller reads the task with
   *     the generic reader instead
   */
  static List<ArrowRecordBatch> read(
      FileIO io,
      List<FileScanTask> run,
      Schema requested,
      List<Field> served,
      String nameMappingJson,
      int batchRows,
      BufferAllocator allocator) {
    FileScanTask task = run.get(0);
    FileScanTask last = run.get(run.size() - 1);
    long start = task.start();
    long length = last.start() + last.length() - start;
    List<ArrowRecordBatch> out = new ArrayList<>();
    BufferAllocator readers =
        allocator.newChildAllocator("vectorized " + task.file().location(), 0, Long.MAX_VALUE);
    try {
      Parquet.ReadBuilder builder =
          Parquet.read(io.newInputFile(task.file().location(), task.file().fileSizeInBytes()))
              .project(requested)
              .split(start, length)
              .filter(task.residual())
              .caseSensitive(true)
              // Vectors are sized for a whole batch: no bigger than the file needs.
              .recordsPerBatch((int) Math.max(1, Math.min(batchRows, task.file().recordCount())))
              .createBatchedReaderFunc(
                  fileSchema ->
                      (VectorizedReader<?>)
                          TypeWithSchemaVisitor.visit(
                              requested.asStruct(),
                              fileSchema,
                              new ReaderBuilder(requested, fileSchema, readers)));
      if (nameMappingJson != null) {
        builder.withNameMapping(NameMappingParser.fromJson(nameMappingJson));
      }
      VectorColumns.Dictionaries dictionaries = new VectorColumns.Dictionaries();
      try (CloseableIterable<VectorHolder[]> batches = builder.build()) {
        for (VectorHolder[] holders : batches) {
          out.add(rightSized(recordBatch(holders, served, allocator, dictionaries), allocator));
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    } catch (RuntimeException | Error e) {
      out.forEach(ArrowRecordBatch::close);
      throw e;
    } finally {
      // The reader builder takes a child of what it is given and never closes it.
      new ArrayList<>(readers.getChildAllocators()).forEach(BufferAllocator::close);
      readers.close();
    }
    return out;
  }

  /**
   * {@code batch}, or an exact copy of it when its buffers are mostly empty capacity. The reader
   * sizes every batch's vectors for {@code recordsPerBatch} rows, and a row group of a few hundred
   * rows still gets them: a slice of a file written with 16 KiB row groups held 57 times its served
   * bytes in such batches before they were coalesced (SliceLoadPeakTest). Copied as they come, a
   * slice's decoded batches hold about its served bytes.
   */
  private static ArrowRecordBatch rightSized(ArrowRecordBatch batch, BufferAllocator allocator) {
    long capacity = 0;
    long used = 0;
    for (org.apache.arrow.memory.ArrowBuf buffer : batch.getBuffers()) {
      capacity += buffer.capacity();
      used += buffer.readableBytes();
    }
    if (capacity <= 2 * used + io.floe.arrow.NodeAllocation.LARGE) {
      return batch;
    }
    try (batch) {
      return io.floe.arrow.BatchPacker.pack(List.of(batch), allocator).get(0);
    }
  }

  private static ArrowRecordBatch recordBatch(
      VectorHolder[] holders,
      List<Field> served,
      BufferAllocator allocator,
      VectorColumns.Dictionaries dictionaries) {
    int rows = holders.length == 0 ? 0 : holders[0].numValues();
    List<FieldVector> columns = new ArrayList<>(served.size());
    try {
      for (int i = 0; i < served.size(); i++) {
        columns.add(
            VectorColumns.toServed(holders[i], served.get(i), rows, allocator, dictionaries));
      }
      try (VectorSchemaRoot root = new VectorSchemaRoot(served, columns, rows)) {
        return new VectorUnloader(root).getRecordBatch();
      }
    } catch (RuntimeException | Error e) {
      columns.forEach(FieldVector::close);
      throw e;
    }
  }

  /** Iceberg's vectorized reader builder, allocating from the slice's scratch allocator. */
  private static final class ReaderBuilder extends VectorizedReaderBuilder {
    ReaderBuilder(Schema expected, MessageType fileSchema, BufferAllocator allocator) {
      super(
          expected,
          fileSchema,
          true, // validity buffers set, so the vectors carry their nulls as Arrow does
          Map.of(),
          HolderBatchReader::new,
          (type, value) -> value,
          allocator);
    }
  }

  /**
   * Hands out each batch's column holders. Every read starts from fresh vectors: the previous
   * batch's vectors were taken over (or closed) by {@link VectorColumns}.
   */
  private static final class HolderBatchReader extends BaseBatchReader<VectorHolder[]> {
    HolderBatchReader(List<VectorizedReader<?>> readers) {
      super(readers);
    }

    @Override
    public VectorHolder[] read(VectorHolder[] reuse, int rows) {
      closeVectors();
      for (int i = 0; i < readers.length; i++) {
        vectorHolders[i] = readers[i].read(null, rows);
      }
      return vectorHolders.clone();
    }
  }
}
