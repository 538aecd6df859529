package io.floe.iceberg;

import io.floe.arrow.ArrowSchemas;
import io.floe.filter.FilterBinding;
import io.floe.filter.RowFilters;
import io.floe.spec.DatasetSpec;
import io.floe.spec.InvalidSpecException;
import io.floe.spec.TableSource;
import io.floe.table.FloeFileIO;
import io.floe.table.StorageFailure;
import io.floe.table.StorageFailures;
import io.floe.util.Excerpt;
import io.floe.util.Preconditions;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ScanTaskParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Plans a dataset: pins the snapshot, checks the columns and filter against its schema, and cuts
 * the scan into slices at Parquet row-group boundaries. A slice is a run of consecutive row groups
 * of about {@code sliceTargetBytes} of Parquet, possibly crossing files of one commit and
 * partition; a row group is never split, so each slice decodes independently and a slice count
 * follows the data, not the nodes.
 *
 * <p>Files are taken in commit order (data sequence number, then partition and path), and a slice
 * never spans two commits or two partitions, so a snapshot that appends, deletes or overwrites a
 * partition leaves the slices of untouched commits and partitions exactly as they were. A slice's
 * id names its content (its row groups, their delete files, the served schema, the filter and batch
 * size): planning a newer snapshot gives every unchanged slice the id it had, which is what lets a
 * refresh keep it loaded.
 */
public final class SlicePlanner {
  private final long sliceTargetBytes;

  public SlicePlanner(long sliceTargetBytes) {
    Preconditions.checkArgument(
        sliceTargetBytes > 0, "Invalid slice target bytes: %s (must be > 0)", sliceTargetBytes);
    this.sliceTargetBytes = sliceTargetBytes;
  }

  /**
   * @throws StorageFailure when a manifest list or manifest cannot be read, naming it
   */
  public ScanPlan plan(TableSource source, Table table, DatasetSpec spec, long generation) {
    Expression parsed = RowFilters.parse(spec.filter());
    Snapshot snapshot = pinSnapshot(table, spec);
    Schema tableSchema =
        snapshot == null ? table.schema() : table.schemas().get(snapshot.schemaId());
    if (tableSchema == null) {
      tableSchema = table.schema();
    }
    Schema requested = project(tableSchema, spec);
    String arrowSchemaJson = ArrowSchemas.fromIceberg(requested).toJson();
    // Checks the filter's columns and converts its literals to their types, with SQL's meaning.
    Expression filter = FilterBinding.bind(parsed, tableSchema, spec.filter());
    Expression bound = FilterBinding.bound(filter, tableSchema, spec.filter());
    if (snapshot == null) {
      return new ScanPlan(source, -1, arrowSchemaJson, List.of(), ScanPlan.MemoryFloor.NONE);
    }

    TableScan scan =
        table
            .newScan()
            .useSnapshot(snapshot.snapshotId())
            .filter(FilterBinding.forPruning(filter, tableSchema))
            .caseSensitive(true);
    ArrowSizeFloor floor = new ArrowSizeFloor(requested, parsed.op() != Expression.Operation.TRUE);
    List<List<FileScanTask>> groups = group(rowGroupTasks(scan, table, snapshot, floor));
    String schemaJson = SchemaParser.toJson(requested);
    // Bound, so each value is written with its column's type and read back exactly by slices.
    String filterJson = ExpressionParser.toJson(bound);
    String nameMapping = table.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    List<SliceSpec> slices = new ArrayList<>(groups.size());
    for (int i = 0; i < groups.size(); i++) {
      List<FileScanTask> tasks = groups.get(i);
      String content =
          SliceContent.key(tasks, schemaJson, filterJson, nameMapping, spec.batchRows());
      slices.add(
          new SliceSpec(
              SliceSpec.sliceId(spec.name(), generation, content),
              source,
              schemaJson,
              filterJson,
              nameMapping,
              tasks.stream().map(ScanTaskParser::toJson).collect(Collectors.toList()),
              spec.batchRows(),
              tasks.stream().mapToLong(FileScanTask::length).sum()));
    }
    return new ScanPlan(
        source,
        snapshot.snapshotId(),
        arrowSchemaJson,
        slices,
        new ScanPlan.MemoryFloor(floor.bytes(), floor.rows()));
  }

  private static Snapshot pinSnapshot(Table table, DatasetSpec spec) {
    if (spec.snapshotId() != null) {
      Snapshot snapshot = table.snapshot(spec.snapshotId());
      if (snapshot == null) {
        throw new InvalidSpecException(
            String.format(
                "Table '%s' has no snapshot %s; known snapshots: %s",
                Excerpt.location(spec.table()), spec.snapshotId(), knownSnapshots(table)));
      }
      return snapshot;
    }
    if (spec.asOfMillis() != null) {
      try {
        return table.snapshot(SnapshotUtil.snapshotIdAsOfTime(table, spec.asOfMillis()));
      } catch (IllegalArgumentException e) {
        throw new InvalidSpecException(
            String.format(
                "Table '%s' has no snapshot as of %s: %s",
                Excerpt.location(spec.table()),
                java.time.Instant.ofEpochMilli(spec.asOfMillis()),
                e.getMessage()),
            e);
      }
    }
    return table.currentSnapshot();
  }

  private static List<Long> knownSnapshots(Table table) {
    List<Long> ids = new ArrayList<>();
    table.snapshots().forEach(s -> ids.add(s.snapshotId()));
    return ids;
  }

  private static Schema project(Schema tableSchema, DatasetSpec spec) {
    if (spec.columns().isEmpty()) {
      return tableSchema;
    }
    for (String column : spec.columns()) {
      if (tableSchema.findField(column) == null) {
        throw new InvalidSpecException(
            String.format(
                "Unknown column '%s'; the table has: %s",
                Excerpt.of(column),
                tableSchema.columns().stream()
                    .map(Types.NestedField::name)
                    .collect(Collectors.toList())));
      }
    }
    // select() keeps the table's column order; readers asked for theirs.
    Schema selected = tableSchema.select(spec.columns());
    List<Types.NestedField> ordered = new ArrayList<>();
    for (String column : spec.columns()) {
      String top = column.contains(".") ? column.substring(0, column.indexOf('.')) : column;
      Types.NestedField field = selected.findField(top);
      if (field != null && !ordered.contains(field)) {
        ordered.add(field);
      }
    }
    return new Schema(ordered);
  }

  /**
   * One task per Parquet row group, in file order; files without offsets stay whole. Each file
   * counts towards {@code floor}.
   */
  private static List<FileScanTask> rowGroupTasks(
      TableScan scan, Table table, Snapshot snapshot, ArrowSizeFloor floor) {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> files = scan.planFiles()) {
      for (FileScanTask file : files) {
        FloeFileIO.checkScheme(file.file().location());
        file.deletes().forEach(delete -> FloeFileIO.checkScheme(delete.location()));
        if (file.file().format() != FileFormat.PARQUET) {
          throw new InvalidSpecException(
              String.format(
                  "Data file '%s' is %s; Floe reads Parquet data files only",
                  file.file().location(), file.file().format()));
        }
        floor.add(file);
        List<Long> offsets = file.file().splitOffsets();
        if (offsets == null || offsets.size() <= 1) {
          tasks.add(file);
        } else {
          // A target of one byte makes Iceberg cut at every split offset, i.e. every row group.
          file.split(1).forEach(tasks::add);
        }
      }
    } catch (IOException | RuntimeException e) {
      if (e instanceof InvalidSpecException invalid) {
        throw invalid; // this planner's own checks
      }
      throw StorageFailures.translateReading(e, unreadableManifest(table, snapshot));
    }
    // Iceberg reads manifests in parallel, so files arrive in no fixed order; slices must not
    // depend on it, because a recovering dataset re-plans and its slices keep their ids. Commit
    // order puts a growing table's new rows last.
    tasks.sort(
        java.util.Comparator.comparingLong(SlicePlanner::commit)
            .thenComparing(SlicePlanner::partition)
            .thenComparing((FileScanTask t) -> t.file().location())
            .thenComparingLong(FileScanTask::start));
    return tasks;
  }

  /**
   * Which of the snapshot's metadata files failed to read, found by reading each again; only run
   * after planning failed, so its cost does not matter.
   */
  private static String unreadableManifest(Table table, Snapshot snapshot) {
    String list = snapshot.manifestListLocation();
    List<ManifestFile> manifests;
    try {
      manifests = snapshot.allManifests(table.io());
    } catch (RuntimeException e) {
      return "manifest list '" + Excerpt.location(list) + "' of snapshot " + snapshot.snapshotId();
    }
    for (ManifestFile manifest : manifests) {
      try (CloseableIterable<?> entries =
          manifest.content() == ManifestContent.DATA
              ? ManifestFiles.read(manifest, table.io())
              : ManifestFiles.readDeleteManifest(manifest, table.io(), null)) {
        entries.forEach(entry -> {});
      } catch (IOException | RuntimeException e) {
        return "manifest '"
            + Excerpt.location(manifest.path())
            + "' of snapshot "
            + snapshot.snapshotId();
      }
    }
    return "the manifests of snapshot "
        + snapshot.snapshotId()
        + " (list '"
        + Excerpt.location(list)
        + "')";
  }

  /** The partition a file is in, as its spec writes it in paths. */
  private static String partition(FileScanTask task) {
    return task.file().specId() + "/" + task.spec().partitionToPath(task.file().partition());
  }

  /** The commit a file came with; format v1 tables have none (0). */
  private static long commit(FileScanTask task) {
    Long sequence = task.file().dataSequenceNumber();
    return sequence == null ? 0 : sequence;
  }

  private List<List<FileScanTask>> group(List<FileScanTask> tasks) {
    List<List<FileScanTask>> groups = new ArrayList<>();
    List<FileScanTask> current = new ArrayList<>();
    long bytes = 0;
    for (FileScanTask task : tasks) {
      boolean boundary =
          !current.isEmpty()
              && (commit(current.get(0)) != commit(task)
                  || !partition(current.get(0)).equals(partition(task)));
      if (!current.isEmpty() && (boundary || bytes + task.length() > sliceTargetBytes)) {
        groups.add(current);
        current = new ArrayList<>();
        bytes = 0;
      }
      current.add(task);
      bytes += task.length();
    }
    if (!current.isEmpty()) {
      groups.add(current);
    }
    return groups;
  }
}
