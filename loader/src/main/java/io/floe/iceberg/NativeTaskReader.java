package io.floe.iceberg;

import io.floe.arrow.ArrowSchemas;
import io.floe.arrow.BatchPacker;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.dataset.file.FileFormat;
import org.apache.arrow.dataset.file.FileSystemDatasetFactory;
import org.apache.arrow.dataset.jni.JniLoader;
import org.apache.arrow.dataset.jni.NativeMemoryPool;
import org.apache.arrow.dataset.scanner.ScanOptions;
import org.apache.arrow.dataset.scanner.Scanner;
import org.apache.arrow.dataset.source.Dataset;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.mapping.MappedField;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes local Parquet files with Arrow's C++ Parquet reader ({@code arrow-dataset}'s JNI
 * library): the file is decoded natively and each batch arrives through the C data interface as
 * buffers accounted to the given allocator (the native memory is freed when the last Java reference
 * to a buffer is closed).
 *
 * <p>It serves a subset of what {@link VectorizedTaskReader} serves, and only that subset:
 *
 * <ul>
 *   <li>tasks the vectorized reader {@link VectorizedTaskReader#accepts accepts} (flat columns, no
 *       delete files, no partition constants or defaults, a filter the partition decides);
 *   <li>a run of tasks that covers the whole file is decoded where it lies; the JNI scanner cannot
 *       select row groups, so a run of part of a file is decoded from an excerpt of its row groups
 *       ({@link RowGroupExcerpts}), or by the vectorized reader when the loader has no excerpts;
 *   <li>files opened first through the table's {@link FileIO}, so the node's location policy has
 *       checked them: local files ({@code file:} or a plain absolute path) whole where they lie,
 *       anything else (object stores: the native reader would need the FileIO's credentials and
 *       endpoint) through an excerpt whose bytes the FileIO fetched;
 *   <li>columns whose Arrow type from the file is the served type ({@link ArrowSchemas}), up to the
 *       name of a timestamp's zone; anything else (widened ints, dictionaries, large strings, other
 *       timestamp units) is refused and the run decoded by the vectorized reader.
 * </ul>
 *
 * Columns are selected by Iceberg field id through the file's own ids ({@code PARQUET:field_id}),
 * or through the table's name mapping for files written without ids; a column the file lacks (added
 * later) is served as nulls, as Iceberg does without a default.
 *
 * <p>The native library is loaded on first use; if it cannot be (another platform, no writable
 * temporary directory), that is logged once and every run goes to the vectorized reader.
 */
final class NativeTaskReader {
  private static final Logger LOG = LoggerFactory.getLogger(NativeTaskReader.class);

  /** Parquet's leading magic; the first row group starts after it. */
  private static final long MAGIC_LENGTH = 4;

  private static volatile Boolean loaded;

  /**
   * Where batches land from the native reader before they are copied into a slice's accounted
   * memory; holds at most a batch per reading thread, for the time of one copy.
   */
  private static final BufferAllocator IMPORTS = new org.apache.arrow.memory.RootAllocator();

  private NativeTaskReader() {}

  /** Whether the native library is loaded (loading it on the first call); logs a failure once. */
  static boolean available() {
    Boolean known = loaded;
    if (known != null) {
      return known;
    }
    synchronized (NativeTaskReader.class) {
      if (loaded == null) {
        try {
          JniLoader.get().ensureLoaded();
          // The C data interface's own library releases the imported buffers.
          org.apache.arrow.c.jni.JniLoader.get().ensureLoaded();
          loaded = true;
          StaleNativeLibraries.remove(
              Path.of(System.getProperty("java.io.tmpdir")), StaleNativeLibraries.AGE);
        } catch (RuntimeException | LinkageError e) {
          LOG.warn(
              "Arrow's native Parquet reader could not be loaded on {} {} ({}); slices are decoded"
                  + " by Iceberg's vectorized reader instead",
              System.getProperty("os.name"),
              System.getProperty("os.arch"),
              e.toString());
          loaded = false;
        }
      }
      return loaded;
    }
  }

  /**
   * Whether the run (consecutive tasks of one file, each {@link VectorizedTaskReader#accepts
   * accepted}) is a local file read whole, which the native reader decodes where it lies; any other
   * run goes through an excerpt ({@link #readRowGroups}).
   */
  static boolean wholeLocalFile(List<FileScanTask> run) {
    FileScanTask first = run.get(0);
    FileScanTask last = run.get(run.size() - 1);
    return localPath(first.file().location()).isPresent()
        && first.start() <= firstRowGroup(first)
        && last.start() + last.length() >= first.file().fileSizeInBytes();
  }

  private static long firstRowGroup(FileScanTask task) {
    List<Long> offsets = task.file().splitOffsets();
    return offsets == null || offsets.isEmpty() ? MAGIC_LENGTH : offsets.get(0);
  }

  /** A local file's absolute path, or empty for any other location (object stores, relative). */
  static Optional<Path> localPath(String location) {
    String path;
    if (location.startsWith("file://")) {
      path = location.substring("file://".length());
      if (!path.startsWith("/")) {
        return Optional.empty(); // file://host/...
      }
    } else if (location.startsWith("file:")) {
      path = location.substring("file:".length());
    } else if (location.startsWith("/")) {
      path = location;
    } else {
      return Optional.empty();
    }
    try {
      Path local = Path.of(path);
      return local.isAbsolute() ? Optional.of(local.normalize()) : Optional.empty();
    } catch (java.nio.file.InvalidPathException e) {
      return Optional.empty();
    }
  }

  /**
   * The rows of a whole file as record batches of at most {@code batchRows} rows with the {@code
   * served} fields, allocated from {@code allocator}; the caller closes them.
   *
   * @throws UnsupportedOperationException when a column comes out of the file in a type the served
   *     one is not; nothing is left allocated then
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
    String location = task.file().location();
    // Through the FileIO first: its location policy decides whether this node reads the file.
    io.newInputFile(location, task.file().fileSizeInBytes());
    Path path =
        localPath(location)
            .orElseThrow(() -> new UnsupportedOperationException("not a local file: " + location));
    return decode(path, location, requested, served, nameMappingJson, batchRows, allocator);
  }

  /**
   * The rows of a run of one file's tasks that do not cover the whole file, or of a file that is
   * not local: its row groups are copied, through the FileIO, into an excerpt that the native
   * reader decodes whole ({@link RowGroupExcerpts}). As {@link #read} otherwise.
   */
  static List<ArrowRecordBatch> readRowGroups(
      FileIO io,
      RowGroupExcerpts excerpts,
      List<FileScanTask> run,
      Schema requested,
      List<Field> served,
      String nameMappingJson,
      int batchRows,
      BufferAllocator allocator) {
    String location = run.get(0).file().location();
    try (BufferAllocator fetched =
        allocator.newChildAllocator("excerpt " + location, 0, Long.MAX_VALUE)) {
      RowGroupExcerpts.Excerpt excerpt;
      try {
        excerpt = excerpts.write(io, run, requested, nameMappingJson, fetched);
      } catch (UnsupportedOperationException | RowGroupExcerpts.ScratchUnavailable e) {
        throw e;
      } catch (RuntimeException e) {
        throw new SourceUnreadable(e);
      }
      try (excerpt) {
        List<ArrowRecordBatch> out =
            decode(
                excerpt.path(), location, requested, served, nameMappingJson, batchRows, allocator);
        long rows = out.stream().mapToLong(ArrowRecordBatch::getLength).sum();
        if (rows != excerpt.rows()) {
          out.forEach(ArrowRecordBatch::close);
          throw new IllegalStateException(
              "The excerpt of " + location + " decoded " + rows + " rows of " + excerpt.rows());
        }
        return out;
      }
    }
  }

  /**
   * Reading the table's file for an excerpt failed (missing, refused, not Parquet): the vectorized
   * reader would fail on it too, so the failure is the load's, as the store gave it ({@link
   * #getCause}).
   */
  static final class SourceUnreadable extends RuntimeException {
    SourceUnreadable(RuntimeException cause) {
      super(cause.getMessage(), cause);
    }
  }

  private static List<ArrowRecordBatch> decode(
      Path path,
      String location,
      Schema requested,
      List<Field> served,
      String nameMappingJson,
      int batchRows,
      BufferAllocator allocator) {
    List<ArrowRecordBatch> out = new ArrayList<>();
    // Batches are imported into an allocator of their own, under a root without a limit, and
    // copied into `allocator` one by one: Arrow Java's C data import leaks the whole native batch
    // (and 128 accounted bytes) when an allocation fails midway, so a full node must fail on the
    // copy, where a failure frees everything, rather than on the import.
    try (BufferAllocator imports =
            IMPORTS.newChildAllocator("native " + location, 0, Long.MAX_VALUE);
        FileSystemDatasetFactory factory =
            new FileSystemDatasetFactory(
                imports,
                NativeMemoryPool.getDefault(),
                FileFormat.PARQUET,
                path.toUri().toString())) {
      org.apache.arrow.vector.types.pojo.Schema fileSchema = factory.inspect();
      Map<Integer, String> columnsById = columnsById(fileSchema, nameMappingJson, location);
      List<String> names = new ArrayList<>();
      for (Types.NestedField field : requested.columns()) {
        String name = columnsById.get(field.fieldId());
        if (name != null) {
          names.add(name);
        }
      }
      // The inspected schema, so that the factory does not read the footer a second time.
      try (Dataset dataset = factory.finish(fileSchema);
          Scanner scanner =
              dataset.newScan(
                  new ScanOptions(batchRows, Optional.of(names.toArray(String[]::new))));
          ArrowReader reader = scanner.scanBatches()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        List<FieldVector> sources = new ArrayList<>(served.size());
        for (int i = 0; i < served.size(); i++) {
          String name = columnsById.get(requested.columns().get(i).fieldId());
          FieldVector source = name == null ? null : root.getVector(name);
          if (name != null) {
            check(source, served.get(i));
          }
          sources.add(source);
        }
        while (reader.loadNextBatch()) {
          try (ArrowRecordBatch imported =
              recordBatch(sources, served, root.getRowCount(), imports)) {
            out.addAll(BatchPacker.pack(List.of(imported), allocator));
          }
        }
      }
    } catch (RuntimeException | Error e) {
      out.forEach(ArrowRecordBatch::close);
      throw e;
    } catch (Exception e) {
      out.forEach(ArrowRecordBatch::close);
      throw new IllegalStateException("Closing the native reader of " + location + " failed", e);
    }
    return out;
  }

  /**
   * The file's top-level column names by Iceberg field id: from its own ids, or through the name
   * mapping when it has none.
   */
  private static Map<Integer, String> columnsById(
      org.apache.arrow.vector.types.pojo.Schema fileSchema,
      String nameMappingJson,
      String location) {
    Map<Integer, String> byId = new HashMap<>();
    for (Field field : fileSchema.getFields()) {
      String id = field.getMetadata().get(ArrowSchemas.FIELD_ID_KEY);
      if (id != null) {
        byId.put(Integer.parseInt(id), field.getName());
      }
    }
    if (!byId.isEmpty()) {
      return byId;
    }
    if (nameMappingJson == null) {
      // Iceberg would give such a file positional ids; rare enough to leave to it.
      throw new UnsupportedOperationException("no field ids and no name mapping for " + location);
    }
    NameMapping mapping = NameMappingParser.fromJson(nameMappingJson);
    for (Field field : fileSchema.getFields()) {
      MappedField mapped = mapping.find(field.getName());
      if (mapped != null && mapped.id() != null) {
        byId.put(mapped.id(), field.getName());
      }
    }
    return byId;
  }

  /** Refuses a column whose decoded type is not the served one. */
  private static void check(FieldVector source, Field served) {
    Field decoded = source.getField();
    ArrowType from = decoded.getType();
    ArrowType to = served.getType();
    if (decoded.getDictionary() != null || !sameValues(from, to)) {
      throw new UnsupportedOperationException(
          "column " + served.getName() + " decodes as " + from + ", served as " + to);
    }
  }

  /**
   * Whether values of type {@code from} are values of type {@code to} as they are: the same type,
   * or timestamps of the same unit that both are (or both are not) instants, whatever name the file
   * gives the zone (the values are UTC either way).
   */
  static boolean sameValues(ArrowType from, ArrowType to) {
    if (from.equals(to)) {
      return true;
    }
    if (from instanceof ArrowType.Timestamp a && to instanceof ArrowType.Timestamp b) {
      return a.getUnit() == b.getUnit() && (a.getTimezone() == null) == (b.getTimezone() == null);
    }
    return false;
  }

  /**
   * One batch in the served fields: each decoded column's buffers taken by a vector of the served
   * field (its name, nullability and field id), a missing column as nulls.
   */
  private static ArrowRecordBatch recordBatch(
      List<FieldVector> sources, List<Field> served, int rows, BufferAllocator allocator) {
    List<FieldVector> columns = new ArrayList<>(served.size());
    try {
      for (int i = 0; i < served.size(); i++) {
        FieldVector source = sources.get(i);
        FieldVector target = served.get(i).createVector(allocator);
        columns.add(target);
        if (source == null) {
          target.setInitialCapacity(rows);
          target.allocateNew();
          target.setValueCount(rows); // validity is zero: every value null
        } else {
          target.loadFieldBuffers(
              new ArrowFieldNode(rows, source.getNullCount()), source.getFieldBuffers());
        }
      }
      try (VectorSchemaRoot root = new VectorSchemaRoot(served, columns, rows)) {
        return new VectorUnloader(root).getRecordBatch();
      }
    } catch (RuntimeException | Error e) {
      columns.forEach(FieldVector::close);
      throw e;
    }
  }
}
