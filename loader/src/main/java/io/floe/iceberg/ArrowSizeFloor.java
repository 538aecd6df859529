package io.floe.iceberg;

import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The least Arrow memory a dataset's rows can take once decoded, from the table's metadata alone:
 * each whole data file's row count times its columns' fixed-size values, validity bits and offsets,
 * and for lists and maps their non-null elements as the file's column metrics count them. Strings'
 * and binaries' bytes are not counted (metrics do not say), so the floor is below what a load
 * holds, never above: a load refused for it could not have fit. Files with delete files, and every
 * file of a filtered dataset, count nothing, since their rows may be fewer.
 */
final class ArrowSizeFloor {
  private static final int OFFSET_BYTES = 4;

  private final Types.StructType columns;
  private final boolean counts;
  private long bytes;
  private long rows;

  /** For the {@code requested} columns; {@code filtered}: a row filter drops an unknown share. */
  ArrowSizeFloor(Schema requested, boolean filtered) {
    this.columns = requested.asStruct();
    this.counts = !filtered;
  }

  /** Counts a whole file's task (before it is cut into row groups). */
  void add(FileScanTask file) {
    if (!counts || !file.deletes().isEmpty()) {
      return;
    }
    DataFile data = file.file();
    long fileRows = data.recordCount();
    Map<Integer, Long> values = data.valueCounts();
    Map<Integer, Long> nulls = data.nullValueCounts();
    rows += fileRows;
    for (Types.NestedField field : columns.fields()) {
      bytes += floor(field, fileRows, values, nulls);
    }
  }

  /** The floor in bytes of everything added. */
  long bytes() {
    return bytes;
  }

  /** The rows counted. */
  long rows() {
    return rows;
  }

  private static long floor(
      Types.NestedField field, long count, Map<Integer, Long> values, Map<Integer, Long> nulls) {
    long validity = (count + 7) / 8;
    Type type = field.type();
    return validity
        + switch (type.typeId()) {
          case BOOLEAN -> (count + 7) / 8;
          case INTEGER, DATE, FLOAT -> 4 * count;
          case LONG, DOUBLE, TIME, TIMESTAMP, TIMESTAMP_NANO -> 8 * count;
          case DECIMAL, UUID -> 16 * count;
          case FIXED -> ((Types.FixedType) type).length() * count;
          case STRING, BINARY -> OFFSET_BYTES * (count + 1);
          case STRUCT -> {
            long sum = 0;
            for (Types.NestedField child : type.asStructType().fields()) {
              sum += floor(child, count, values, nulls);
            }
            yield sum;
          }
          case LIST -> {
            Types.NestedField element = type.asListType().fields().get(0);
            yield OFFSET_BYTES * (count + 1)
                + floor(element, elements(element, values, nulls), values, nulls);
          }
          case MAP -> {
            Types.MapType map = type.asMapType();
            Types.NestedField key = map.fields().get(0);
            long entries = elements(key, values, nulls);
            yield OFFSET_BYTES * (count + 1)
                + floor(key, entries, values, nulls)
                + floor(map.fields().get(1), entries, values, nulls);
          }
          default -> 0; // a type not listed here counts nothing, which keeps it a floor
        };
  }

  /**
   * The non-null values a nested leaf's metrics count (a Parquet column's values less its nulls,
   * which include the empty and null lists above it); 0 when the file has no metrics for it or it
   * is not a leaf.
   */
  private static long elements(
      Types.NestedField field, Map<Integer, Long> values, Map<Integer, Long> nulls) {
    if (values == null || !values.containsKey(field.fieldId())) {
      return 0;
    }
    long nonNull =
        values.get(field.fieldId()) - (nulls == null ? 0 : nulls.getOrDefault(field.fieldId(), 0L));
    return Math.max(0, nonNull);
  }
}
