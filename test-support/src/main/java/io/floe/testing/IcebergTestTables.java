package io.floe.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.apache.iceberg.util.StructLikeSet;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/**
 * Writes real Iceberg tables (format v2, Parquet) through {@link HadoopTables}, for tests that need
 * files, row groups, partitions, deletes and snapshots exactly as a real writer leaves them.
 *
 * <pre>{@code
 * TestTable t = IcebergTestTables.in(tempDir)
 *     .create("events", TestRows.EVENTS, TestRows.EVENTS_BY_CATEGORY_AND_DAY)
 *     .appendFiles(4, 2_000, TestRows.events(42))
 *     .deletePositions(row -> (long) row.getField("id") % 10 == 0)
 *     .deleteEqual("category", "games");
 * List<Record> expected = IcebergTestTables.readAllGeneric(t.table());
 * }</pre>
 *
 * <p>Row groups are kept small ({@value #DEFAULT_ROW_GROUP_BYTES} bytes unless changed) so that a
 * few thousand rows already give every data file several row groups.
 */
public final class IcebergTestTables {
  public static final int DEFAULT_ROW_GROUP_BYTES = 16 * 1024;

  private final String baseLocation;
  private final Configuration conf;
  private final Catalog catalog;
  private final Namespace namespace;
  private final Map<String, String> properties = new LinkedHashMap<>();

  private IcebergTestTables(
      String baseLocation, Configuration conf, Catalog catalog, Namespace namespace) {
    this.baseLocation =
        baseLocation == null || baseLocation.endsWith("/") ? baseLocation : baseLocation + "/";
    this.conf = conf;
    this.catalog = catalog;
    this.namespace = namespace;
    properties.put(TableProperties.FORMAT_VERSION, "2");
    properties.put(
        TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, String.valueOf(DEFAULT_ROW_GROUP_BYTES));
    // Parquet only checks the row group size every so many records; check often so small row
    // groups come out close to the size asked for.
    properties.put(TableProperties.PARQUET_ROW_GROUP_CHECK_MIN_RECORD_COUNT, "10");
    properties.put(TableProperties.PARQUET_ROW_GROUP_CHECK_MAX_RECORD_COUNT, "100");
  }

  /** Tables under a local directory; each table lives in {@code dir/<name>}. */
  public static IcebergTestTables in(Path dir) {
    return new IcebergTestTables(dir.toAbsolutePath().toString(), new Configuration(), null, null);
  }

  /**
   * Tables in {@code namespace} of a catalog, written through the catalog's FileIO, e.g. {@link
   * S3TestServer#catalog(String)} for tables with {@code s3://} paths.
   */
  public static IcebergTestTables inCatalog(Catalog catalog, String namespace) {
    Namespace ns = Namespace.of(namespace);
    if (catalog instanceof SupportsNamespaces namespaces && !namespaces.namespaceExists(ns)) {
      namespaces.createNamespace(ns);
    }
    return new IcebergTestTables(null, new Configuration(), catalog, ns);
  }

  /** Sets a table property for tables created from now on. */
  public IcebergTestTables property(String key, String value) {
    properties.put(key, value);
    return this;
  }

  /** Target Parquet row group size ({@code write.parquet.row-group-size-bytes}). */
  public IcebergTestTables rowGroupBytes(long bytes) {
    return property(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, String.valueOf(bytes));
  }

  public Configuration conf() {
    return conf;
  }

  /** Where a table of this name lives (for tables in a local directory). */
  public String location(String name) {
    return baseLocation + name;
  }

  /** The identifier of a table of this name in the catalog, {@code namespace.name}. */
  public TableIdentifier identifier(String name) {
    return TableIdentifier.of(namespace, name);
  }

  public TestTable create(String name, Schema schema) {
    return create(name, schema, PartitionSpec.unpartitioned());
  }

  public TestTable create(String name, Schema schema, PartitionSpec spec) {
    Table table =
        catalog == null
            ? new HadoopTables(conf).create(schema, spec, properties, location(name))
            : catalog.createTable(identifier(name), schema, spec, properties);
    return new TestTable(table, conf);
  }

  /** Loads a table this fixture (or anything else) wrote under {@code name}. */
  public Table load(String name) {
    return catalog == null
        ? new HadoopTables(conf).load(location(name))
        : catalog.loadTable(identifier(name));
  }

  /** Every live row of the current snapshot, deletes applied, in no particular order. */
  public static List<Record> readAllGeneric(Table table) {
    return read(IcebergGenerics.read(table), table.schema());
  }

  /** Live rows matching {@code filter}, projected to {@code columns} (all if none given). */
  public static List<Record> readGeneric(Table table, Expression filter, String... columns) {
    IcebergGenerics.ScanBuilder scan = IcebergGenerics.read(table).where(filter);
    if (columns.length == 0) {
      return read(scan, table.schema());
    }
    return read(scan.select(columns), table.schema().select(columns));
  }

  /** Every live row of an older snapshot, pinned by id. */
  public static List<Record> readSnapshot(Table table, long snapshotId) {
    return read(
        IcebergGenerics.read(table).useSnapshot(snapshotId), snapshotSchema(table, snapshotId));
  }

  /** Every live row of the snapshot that was current at {@code timestampMillis}. */
  public static List<Record> readAsOf(Table table, long timestampMillis) {
    long snapshotId = SnapshotUtil.snapshotIdAsOfTime(table, timestampMillis);
    return read(
        IcebergGenerics.read(table).asOfTime(timestampMillis), snapshotSchema(table, snapshotId));
  }

  /**
   * Runs any generic scan and returns its rows as records of {@code projection}. The projection
   * matters: with deletes, Iceberg's generic reader hands back rows that also carry {@code _pos}
   * and the equality-delete columns it needed, which would never equal an expected row.
   */
  public static List<Record> read(IcebergGenerics.ScanBuilder scan, Schema projection) {
    List<Record> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = scan.build()) {
      for (Record record : records) {
        rows.add(project(record, projection));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return rows;
  }

  private static Record project(Record record, Schema projection) {
    if (record.struct().equals(projection.asStruct())) {
      return record;
    }
    Record projected = GenericRecord.create(projection);
    for (Types.NestedField field : projection.columns()) {
      projected.setField(field.name(), record.getField(field.name()));
    }
    return projected;
  }

  private static Schema snapshotSchema(Table table, long snapshotId) {
    Integer schemaId = table.snapshot(snapshotId).schemaId();
    return schemaId == null ? table.schema() : table.schemas().get(schemaId);
  }

  /** The rows ordered by their {@code id} column. */
  public static List<Record> sortedById(List<Record> rows) {
    List<Record> sorted = new ArrayList<>(rows);
    sorted.sort(Comparator.comparingLong(row -> (Long) row.getField("id")));
    return sorted;
  }

  /** Number of row groups in a Parquet file, read from its footer. */
  public static int rowGroupCount(String location, Configuration conf) {
    try (ParquetFileReader reader =
        ParquetFileReader.open(
            HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(location), conf))) {
      return reader.getRowGroups().size();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One table and the writes a test makes to it. Every write is one commit, one snapshot. */
  public static final class TestTable {
    private final Table table;
    private final Configuration conf;
    private long nextId;

    private TestTable(Table table, Configuration conf) {
      this.table = table;
      this.conf = conf;
    }

    public Table table() {
      return table;
    }

    public String location() {
      return table.location();
    }

    /** The metadata.json of the current table state, what a reader is pointed at. */
    public String metadataLocation() {
      return ((HasTableOperations) table).operations().current().metadataFileLocation();
    }

    public long snapshotId() {
      return table.currentSnapshot().snapshotId();
    }

    /** The id the next generated row gets; ids start at 0 and never repeat. */
    public long nextId() {
      return nextId;
    }

    /**
     * Appends {@code fileCount * rowsPerFile} generated rows with ids continuing from {@link
     * #nextId()}, in one snapshot. Rows are cut into chunks of {@code rowsPerFile}; each chunk
     * becomes one file, or one file per partition it touches when the table is partitioned.
     */
    public TestTable appendFiles(int fileCount, int rowsPerFile, RowGenerator rows) {
      List<DataFile> files = new ArrayList<>();
      for (int f = 0; f < fileCount; f++) {
        List<Record> chunk = TestRows.rows(rows, nextId, nextId + rowsPerFile);
        nextId += rowsPerFile;
        files.addAll(writeDataFiles(chunk));
      }
      commitAppend(files);
      return this;
    }

    /** Appends the given rows in one snapshot: one file, or one per partition they touch. */
    public TestTable appendRows(List<Record> rows) {
      commitAppend(writeDataFiles(rows));
      return this;
    }

    /**
     * Writes position deletes for every row of the current data files that {@code which} matches
     * (rows already deleted included): one delete file per data file, all in one snapshot. Nothing
     * is committed when no row matches.
     */
    public TestTable deletePositions(Predicate<Record> which) {
      List<DeleteFile> deletes = new ArrayList<>();
      for (DataFile file : dataFiles()) {
        List<Long> positions = matchingPositions(file, which);
        if (!positions.isEmpty()) {
          deletes.add(writePositionDeletes(file, positions));
        }
      }
      commitDeletes(deletes);
      return this;
    }

    /**
     * Writes equality deletes removing every row whose {@code column} equals one of {@code values},
     * in one snapshot. Partitioned tables get one delete file per partition holding data, because
     * an equality delete only applies within its own partition.
     */
    public TestTable deleteEqual(String column, Object... values) {
      Types.NestedField field = table.schema().findField(column);
      if (field == null) {
        throw new IllegalArgumentException("No column " + column + " in " + table.schema());
      }
      Schema deleteSchema = table.schema().select(column);
      List<Record> keys = new ArrayList<>();
      for (Object value : values) {
        Record key = GenericRecord.create(deleteSchema);
        key.set(0, value);
        keys.add(key);
      }
      List<DeleteFile> deletes = new ArrayList<>();
      for (Map.Entry<Integer, StructLikeSet> entry : partitionsWithData().entrySet()) {
        PartitionSpec spec = table.specs().get(entry.getKey());
        for (StructLike partition : entry.getValue()) {
          deletes.add(writeEqualityDeletes(spec, partition, deleteSchema, field.fieldId(), keys));
        }
      }
      commitDeletes(deletes);
      return this;
    }

    /**
     * Replaces every partition that {@code rows} fall in with just these rows, in one snapshot
     * (Iceberg's dynamic partition overwrite, as {@code INSERT OVERWRITE} does it).
     */
    public TestTable replacePartitions(List<Record> rows) {
      org.apache.iceberg.ReplacePartitions replace = table.newReplacePartitions();
      writeDataFiles(rows).forEach(replace::addFile);
      replace.commit();
      return this;
    }

    /** The rows of {@code generator} for the next {@code count} ids, consuming those ids. */
    public List<Record> nextRows(int count, RowGenerator generator) {
      List<Record> rows = TestRows.rows(generator, nextId, nextId + count);
      nextId += count;
      return rows;
    }

    /** Sets a table property on this table (a metadata commit, no new snapshot). */
    public TestTable property(String key, String value) {
      table.updateProperties().set(key, value).commit();
      return this;
    }

    /** The data files of the current snapshot. */
    public List<DataFile> dataFiles() {
      List<DataFile> files = new ArrayList<>();
      forEachTask(task -> files.add(task.file()));
      return files;
    }

    /** The delete files of the current snapshot, each once. */
    public List<DeleteFile> deleteFiles() {
      Map<String, DeleteFile> deletes = new LinkedHashMap<>();
      forEachTask(task -> task.deletes().forEach(d -> deletes.putIfAbsent(d.location(), d)));
      return new ArrayList<>(deletes.values());
    }

    public int rowGroupCount(DataFile file) {
      return IcebergTestTables.rowGroupCount(file.location(), conf);
    }

    private void forEachTask(java.util.function.Consumer<FileScanTask> action) {
      if (table.currentSnapshot() == null) {
        return;
      }
      try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
        tasks.forEach(action);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private List<DataFile> writeDataFiles(List<Record> rows) {
      if (rows.isEmpty()) {
        return List.of();
      }
      PartitionSpec spec = table.spec();
      if (spec.isUnpartitioned()) {
        return List.of(writeDataFile(spec, null, rows));
      }
      // Transforms want Iceberg's internal values (micros, days), not java.time objects.
      InternalRecordWrapper wrapper = new InternalRecordWrapper(table.schema().asStruct());
      PartitionKey key = new PartitionKey(spec, table.schema());
      Map<PartitionKey, List<Record>> byPartition = new LinkedHashMap<>();
      for (Record row : rows) {
        key.partition(wrapper.wrap(row));
        byPartition.computeIfAbsent(key.copy(), k -> new ArrayList<>()).add(row);
      }
      List<DataFile> files = new ArrayList<>();
      byPartition.forEach((partition, part) -> files.add(writeDataFile(spec, partition, part)));
      return files;
    }

    private DataFile writeDataFile(PartitionSpec spec, StructLike partition, List<Record> rows) {
      OutputFile out = newOutputFile(spec, partition, "data");
      try {
        DataWriter<Record> writer =
            Parquet.writeData(out)
                .forTable(table)
                .withSpec(spec)
                .withPartition(partition)
                .createWriterFunc(GenericParquetWriter::create)
                .overwrite()
                .build();
        try (writer) {
          rows.forEach(writer::write);
        }
        return writer.toDataFile();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    // Positions are physical row numbers in the file, so read the file itself, not a scan.
    private List<Long> matchingPositions(DataFile file, Predicate<Record> which) {
      Schema schema = table.schema();
      List<Long> positions = new ArrayList<>();
      try (CloseableIterable<Record> rows =
          Parquet.read(table.io().newInputFile(file.location()))
              .project(schema)
              .createReaderFunc(fileSchema -> GenericParquetReaders.buildReader(schema, fileSchema))
              .build()) {
        long pos = 0;
        for (Record row : rows) {
          if (which.test(row)) {
            positions.add(pos);
          }
          pos++;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return positions;
    }

    private DeleteFile writePositionDeletes(DataFile file, List<Long> positions) {
      PartitionSpec spec = table.specs().get(file.specId());
      OutputFile out = newOutputFile(spec, file.partition(), "pos-deletes");
      try {
        PositionDeleteWriter<Record> writer =
            // Full metrics on file_path, as Spark and PyIceberg write them, so that a delete file
            // is
            // attached only to the data file it names.
            Parquet.writeDeletes(out)
                .setAll(table.properties())
                .metricsConfig(org.apache.iceberg.MetricsConfig.forPositionDelete(table))
                .withSpec(spec)
                .withPartition(file.partition())
                .overwrite()
                .buildPositionWriter();
        PositionDelete<Record> delete = PositionDelete.create();
        try (writer) {
          for (long pos : positions) {
            writer.write(delete.set(file.location(), pos));
          }
        }
        return writer.toDeleteFile();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private DeleteFile writeEqualityDeletes(
        PartitionSpec spec,
        StructLike partition,
        Schema deleteSchema,
        int fieldId,
        List<Record> keys) {
      OutputFile out = newOutputFile(spec, partition, "eq-deletes");
      try {
        EqualityDeleteWriter<Record> writer =
            Parquet.writeDeletes(out)
                .forTable(table)
                .rowSchema(deleteSchema)
                .withSpec(spec)
                .withPartition(spec.isUnpartitioned() ? null : partition)
                .createWriterFunc(GenericParquetWriter::create)
                .equalityFieldIds(fieldId)
                .overwrite()
                .buildEqualityWriter();
        try (writer) {
          keys.forEach(writer::write);
        }
        return writer.toDeleteFile();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private Map<Integer, StructLikeSet> partitionsWithData() {
      Map<Integer, StructLikeSet> partitions = new HashMap<>();
      for (DataFile file : dataFiles()) {
        partitions
            .computeIfAbsent(
                file.specId(), id -> StructLikeSet.create(table.specs().get(id).partitionType()))
            .add(file.partition());
      }
      return partitions;
    }

    private OutputFile newOutputFile(PartitionSpec spec, StructLike partition, String kind) {
      String name = FileFormat.PARQUET.addExtension(kind + "-" + UUID.randomUUID());
      String location =
          spec.isUnpartitioned()
              ? table.locationProvider().newDataLocation(name)
              : table.locationProvider().newDataLocation(spec, partition, name);
      return table.io().newOutputFile(location);
    }

    private void commitAppend(List<DataFile> files) {
      if (files.isEmpty()) {
        return;
      }
      AppendFiles append = table.newAppend();
      files.forEach(append::appendFile);
      awaitNextMillisecond();
      append.commit();
    }

    private void commitDeletes(List<DeleteFile> deletes) {
      if (deletes.isEmpty()) {
        return;
      }
      RowDelta delta = table.newRowDelta();
      deletes.forEach(delta::addDeletes);
      awaitNextMillisecond();
      delta.commit();
    }

    // Snapshots are found "as of" a millisecond timestamp; two commits in the same millisecond
    // would make the older one impossible to pin by time.
    private void awaitNextMillisecond() {
      Snapshot current = table.currentSnapshot();
      if (current == null) {
        return;
      }
      while (System.currentTimeMillis() <= current.timestampMillis()) {
        Thread.onSpinWait();
      }
    }
  }
}
