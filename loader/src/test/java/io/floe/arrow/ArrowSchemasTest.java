package io.floe.arrow;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/** Every Iceberg type maps to its Arrow type; types without an Arrow form name their column. */
class ArrowSchemasTest {

  @Test
  void everyPrimitiveMapsToItsArrowType() {
    org.apache.iceberg.Schema iceberg =
        new org.apache.iceberg.Schema(
            required(1, "b", Types.BooleanType.get()),
            optional(2, "i", Types.IntegerType.get()),
            optional(3, "l", Types.LongType.get()),
            optional(4, "f", Types.FloatType.get()),
            optional(5, "d", Types.DoubleType.get()),
            optional(6, "dec", Types.DecimalType.of(38, 10)),
            optional(7, "date", Types.DateType.get()),
            optional(8, "time", Types.TimeType.get()),
            optional(9, "ts", Types.TimestampType.withoutZone()),
            optional(10, "tstz", Types.TimestampType.withZone()),
            optional(11, "tsns", Types.TimestampNanoType.withZone()),
            optional(12, "s", Types.StringType.get()),
            optional(13, "u", Types.UUIDType.get()),
            optional(14, "fx", Types.FixedType.ofLength(5)),
            optional(15, "bin", Types.BinaryType.get()),
            optional(16, "unknown", Types.UnknownType.get()));

    Schema arrow = ArrowSchemas.fromIceberg(iceberg);

    assertThat(arrow.getFields().stream().map(Field::getType))
        .containsExactly(
            ArrowType.Bool.INSTANCE,
            new ArrowType.Int(32, true),
            new ArrowType.Int(64, true),
            new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE),
            new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE),
            new ArrowType.Decimal(38, 10, 128),
            new ArrowType.Date(DateUnit.DAY),
            new ArrowType.Time(TimeUnit.MICROSECOND, 64),
            new ArrowType.Timestamp(TimeUnit.MICROSECOND, null),
            new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC"),
            new ArrowType.Timestamp(TimeUnit.NANOSECOND, "UTC"),
            ArrowType.Utf8.INSTANCE,
            new ArrowType.FixedSizeBinary(16),
            new ArrowType.FixedSizeBinary(5),
            ArrowType.Binary.INSTANCE,
            ArrowType.Null.INSTANCE);
    assertThat(arrow.getFields().get(0).isNullable()).isFalse();
    assertThat(arrow.getFields().get(1).isNullable()).isTrue();
    assertThat(arrow.getFields().get(2).getMetadata())
        .containsEntry(ArrowSchemas.FIELD_ID_KEY, "3");
  }

  @Test
  void nestedTypesNest() {
    org.apache.iceberg.Schema iceberg =
        new org.apache.iceberg.Schema(
            optional(
                1,
                "m",
                Types.MapType.ofRequired(2, 3, Types.StringType.get(), Types.LongType.get())),
            optional(4, "l", Types.ListType.ofOptional(5, Types.IntegerType.get())));

    Schema arrow = ArrowSchemas.fromIceberg(iceberg);

    Field map = arrow.getFields().get(0);
    assertThat(map.getType()).isEqualTo(new ArrowType.Map(false));
    Field entries = map.getChildren().get(0);
    assertThat(entries.isNullable()).isFalse();
    assertThat(entries.getChildren().stream().map(Field::getName)).containsExactly("key", "value");
    assertThat(entries.getChildren().get(1).isNullable()).isFalse();
    assertThat(arrow.getFields().get(1).getChildren())
        .extracting(Field::getType)
        .isEqualTo(List.of(new ArrowType.Int(32, true)));
  }

  @Test
  void variantIsRejectedWithTheColumnPath() {
    org.apache.iceberg.Schema iceberg =
        new org.apache.iceberg.Schema(
            required(1, "id", Types.LongType.get()),
            optional(
                2, "meta", Types.StructType.of(optional(3, "payload", Types.VariantType.get()))));

    assertThatThrownBy(() -> ArrowSchemas.fromIceberg(iceberg))
        .isInstanceOf(UnsupportedColumnException.class)
        .hasMessageContaining("'meta.payload'")
        .hasMessageContaining("variant");
  }
}
