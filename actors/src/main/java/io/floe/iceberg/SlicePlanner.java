package io.floe.iceberg;

import io.floe.arrow.ArrowSchemas;
import io.floe.dataset.DatasetSpec;
import io.floe.filter.FilterBinding;
import io.floe.filter.RowFilters;
import io.floe.slice.SliceSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ScanTaskParser;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.relocated.com.google.common.base.Preconditions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * Plans a dataset: pins the snapshot, checks the columns and filter against its schema, and cuts
 * the scan into slices at Parquet row-group boundaries. A slice is a run of consecutive row groups
 * (possibly crossing files) of about {@code sliceTargetBytes} of Parquet; a row group is never
 * split, so each slice decodes independently and a slice count follows the data, not the nodes.
 */
public final class SlicePlanner {
  public static final long SLICE_TARGET_BYTES_DEFAULT = 16L * 1024 * 1024;

  private final long sliceTargetBytes;

  public SlicePlanner(long sliceTargetBytes) {
    Preconditions.checkArgument(
        sliceTargetBytes > 0, "Invalid slice target bytes: %s (must be > 0)", sliceTargetBytes);
    this.sliceTargetBytes = sliceTargetBytes;
  }

  public ScanPlan plan(Table table, DatasetSpec spec, long generation) {
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
    Expression bound = Binder.bind(tableSchema.asStruct(), filter, true);
    if (snapshot == null) {
      return new ScanPlan(-1, arrowSchemaJson, List.of());
    }

    TableScan scan =
        table
            .newScan()
            .useSnapshot(snapshot.snapshotId())
            .filter(FilterBinding.forPruning(filter, tableSchema))
            .caseSensitive(true);
    List<List<FileScanTask>> groups = group(rowGroupTasks(scan));
    String schemaJson = SchemaParser.toJson(requested);
    // Bound, so each value is written with its column's type and read back exactly by slices.
    String filterJson = ExpressionParser.toJson(bound);
    String nameMapping = table.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    List<SliceSpec> slices = new ArrayList<>(groups.size());
    for (int i = 0; i < groups.size(); i++) {
      List<FileScanTask> tasks = groups.get(i);
      slices.add(
          new SliceSpec(
              SliceSpec.sliceId(spec.name(), generation, i),
              schemaJson,
              filterJson,
              nameMapping,
              tasks.stream().map(ScanTaskParser::toJson).collect(Collectors.toList()),
              spec.batchRows(),
              tasks.stream().mapToLong(FileScanTask::length).sum()));
    }
    return new ScanPlan(snapshot.snapshotId(), arrowSchemaJson, slices);
  }

  private static Snapshot pinSnapshot(Table table, DatasetSpec spec) {
    if (spec.snapshotId() != null) {
      Snapshot snapshot = table.snapshot(spec.snapshotId());
      Preconditions.checkArgument(
          snapshot != null,
          "Table '%s' has no snapshot %s; known snapshots: %s",
          spec.table(),
          spec.snapshotId(),
          knownSnapshots(table));
      return snapshot;
    }
    if (spec.asOfMillis() != null) {
      return table.snapshot(SnapshotUtil.snapshotIdAsOfTime(table, spec.asOfMillis()));
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
      Types.NestedField field = tableSchema.findField(column);
      Preconditions.checkArgument(
          field != null,
          "Unknown column '%s'; the table has: %s",
          column,
          tableSchema.columns().stream().map(Types.NestedField::name).collect(Collectors.toList()));
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

  /** One task per Parquet row group, in file order; files without offsets stay whole. */
  private static List<FileScanTask> rowGroupTasks(TableScan scan) {
    List<FileScanTask> tasks = new ArrayList<>();
    try (CloseableIterable<FileScanTask> files = scan.planFiles()) {
      for (FileScanTask file : files) {
        Preconditions.checkArgument(
            file.file().format() == FileFormat.PARQUET,
            "Data file '%s' is %s; Floe reads Parquet data files only",
            file.file().location(),
            file.file().format());
        List<Long> offsets = file.file().splitOffsets();
        if (offsets == null || offsets.size() <= 1) {
          tasks.add(file);
        } else {
          // A target of one byte makes Iceberg cut at every split offset, i.e. every row group.
          file.split(1).forEach(tasks::add);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Failed to plan scan files", e);
    }
    // Iceberg reads manifests in parallel, so files arrive in no fixed order; slices must not
    // depend on it, because a recovering dataset re-plans and its slices keep their ids.
    tasks.sort(
        java.util.Comparator.comparing((FileScanTask t) -> t.file().location())
            .thenComparingLong(FileScanTask::start));
    return tasks;
  }

  private List<List<FileScanTask>> group(List<FileScanTask> tasks) {
    List<List<FileScanTask>> groups = new ArrayList<>();
    List<FileScanTask> current = new ArrayList<>();
    long bytes = 0;
    for (FileScanTask task : tasks) {
      if (!current.isEmpty() && bytes + task.length() > sliceTargetBytes) {
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
