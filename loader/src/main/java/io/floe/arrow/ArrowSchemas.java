package io.floe.arrow;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Maps Iceberg schemas to the Arrow schemas Floe serves. Every Iceberg primitive has an Arrow
 * counterpart; struct, list and map nest. Variant and the geospatial types have no agreed Arrow
 * form yet and are rejected with the column's path, so a load fails at planning rather than
 * mid-stream.
 */
public final class ArrowSchemas {
  /** Field metadata key carrying the Iceberg field id, so clients can map columns back. */
  public static final String FIELD_ID_KEY = "PARQUET:field_id";

  private ArrowSchemas() {}

  public static Schema fromIceberg(org.apache.iceberg.Schema schema) {
    List<Field> fields = new ArrayList<>();
    for (Types.NestedField field : schema.columns()) {
      fields.add(field(field, field.name()));
    }
    return new Schema(fields);
  }

  static Field field(Types.NestedField field, String path) {
    return field(field.name(), field.isOptional(), field.type(), path, field.fieldId());
  }

  private static Field field(String name, boolean nullable, Type type, String path, int id) {
    java.util.Map<String, String> metadata = java.util.Map.of(FIELD_ID_KEY, Integer.toString(id));
    switch (type.typeId()) {
      case STRUCT:
        {
          List<Field> children = new ArrayList<>();
          for (Types.NestedField child : type.asStructType().fields()) {
            children.add(field(child, path + "." + child.name()));
          }
          return new Field(
              name, new FieldType(nullable, ArrowType.Struct.INSTANCE, null, metadata), children);
        }
      case LIST:
        {
          Types.ListType list = type.asListType();
          Field element =
              field(
                  "element",
                  list.isElementOptional(),
                  list.elementType(),
                  path + ".element",
                  list.elementId());
          return new Field(
              name,
              new FieldType(nullable, ArrowType.List.INSTANCE, null, metadata),
              List.of(element));
        }
      case MAP:
        {
          Types.MapType map = type.asMapType();
          Field key = field("key", false, map.keyType(), path + ".key", map.keyId());
          Field value =
              field(
                  "value", map.isValueOptional(), map.valueType(), path + ".value", map.valueId());
          Field entries =
              new Field(
                  "entries", FieldType.notNullable(ArrowType.Struct.INSTANCE), List.of(key, value));
          return new Field(
              name,
              new FieldType(nullable, new ArrowType.Map(false), null, metadata),
              List.of(entries));
        }
      default:
        return new Field(
            name, new FieldType(nullable, primitive(type, path), null, metadata), List.of());
    }
  }

  private static ArrowType primitive(Type type, String path) {
    switch (type.typeId()) {
      case BOOLEAN:
        return ArrowType.Bool.INSTANCE;
      case INTEGER:
        return new ArrowType.Int(32, true);
      case LONG:
        return new ArrowType.Int(64, true);
      case FLOAT:
        return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case DOUBLE:
        return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case DECIMAL:
        Types.DecimalType decimal = (Types.DecimalType) type;
        return new ArrowType.Decimal(decimal.precision(), decimal.scale(), 128);
      case DATE:
        return new ArrowType.Date(DateUnit.DAY);
      case TIME:
        return new ArrowType.Time(TimeUnit.MICROSECOND, 64);
      case TIMESTAMP:
        return new ArrowType.Timestamp(
            TimeUnit.MICROSECOND, ((Types.TimestampType) type).shouldAdjustToUTC() ? "UTC" : null);
      case TIMESTAMP_NANO:
        return new ArrowType.Timestamp(
            TimeUnit.NANOSECOND,
            ((Types.TimestampNanoType) type).shouldAdjustToUTC() ? "UTC" : null);
      case STRING:
        return ArrowType.Utf8.INSTANCE;
      case UUID:
        return new ArrowType.FixedSizeBinary(16);
      case FIXED:
        return new ArrowType.FixedSizeBinary(((Types.FixedType) type).length());
      case BINARY:
        return ArrowType.Binary.INSTANCE;
      case UNKNOWN:
        return ArrowType.Null.INSTANCE;
      default:
        throw new UnsupportedColumnException(path, type.toString());
    }
  }
}
