package io.floe.arrow;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TimeStampNanoTZVector;
import org.apache.arrow.vector.TimeStampNanoVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Builds {@link ValueWriter}s that copy Iceberg generic values (as produced by Iceberg's generic
 * Parquet reader) into the Arrow vectors described by {@link ArrowSchemas}. The requested type says
 * what the vector holds; the source type says where each nested field sits in the record, which may
 * carry extra fields that only the row filter or delete filter needed.
 */
final class ValueWriters {
  private static final OffsetDateTime EPOCH =
      OffsetDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);

  private ValueWriters() {}

  /** A writer for a struct value whose fields are written into {@code vectors} in order. */
  static StructWriter struct(
      List<FieldVector> vectors, Types.StructType requested, Types.StructType source) {
    ValueWriter[] writers = new ValueWriter[vectors.size()];
    int[] positions = new int[vectors.size()];
    List<Types.NestedField> fields = requested.fields();
    for (int i = 0; i < writers.length; i++) {
      Types.NestedField field = fields.get(i);
      positions[i] = position(source, field.fieldId());
      writers[i] =
          forVector(vectors.get(i), field.type(), source.fields().get(positions[i]).type());
    }
    return new StructWriter(writers, positions);
  }

  private static int position(Types.StructType struct, int fieldId) {
    List<Types.NestedField> fields = struct.fields();
    for (int i = 0; i < fields.size(); i++) {
      if (fields.get(i).fieldId() == fieldId) {
        return i;
      }
    }
    throw new IllegalStateException("Field id " + fieldId + " missing from read schema " + struct);
  }

  /** Writes the fields of a {@link StructLike} into parallel vectors at one row index. */
  static final class StructWriter {
    private final ValueWriter[] writers;
    private final int[] positions;

    private StructWriter(ValueWriter[] writers, int[] positions) {
      this.writers = writers;
      this.positions = positions;
    }

    void write(int index, StructLike struct) {
      for (int i = 0; i < writers.length; i++) {
        writers[i].write(index, struct.get(positions[i], Object.class));
      }
    }

    void writeNull(int index) {
      for (ValueWriter writer : writers) {
        writer.write(index, null);
      }
    }
  }

  static ValueWriter forVector(FieldVector vector, Type requested, Type source) {
    switch (requested.typeId()) {
      case BOOLEAN:
        BitVector bits = (BitVector) vector;
        return (i, v) -> {
          if (v == null) bits.setNull(i);
          else bits.setSafe(i, ((Boolean) v) ? 1 : 0);
        };
      case INTEGER:
        IntVector ints = (IntVector) vector;
        return (i, v) -> {
          if (v == null) ints.setNull(i);
          else ints.setSafe(i, (Integer) v);
        };
      case LONG:
        BigIntVector longs = (BigIntVector) vector;
        return (i, v) -> {
          if (v == null) longs.setNull(i);
          else longs.setSafe(i, ((Number) v).longValue());
        };
      case FLOAT:
        Float4Vector floats = (Float4Vector) vector;
        return (i, v) -> {
          if (v == null) floats.setNull(i);
          else floats.setSafe(i, (Float) v);
        };
      case DOUBLE:
        Float8Vector doubles = (Float8Vector) vector;
        return (i, v) -> {
          if (v == null) doubles.setNull(i);
          else doubles.setSafe(i, ((Number) v).doubleValue());
        };
      case DECIMAL:
        DecimalVector decimals = (DecimalVector) vector;
        return (i, v) -> {
          if (v == null) decimals.setNull(i);
          else decimals.setSafe(i, (BigDecimal) v);
        };
      case DATE:
        DateDayVector dates = (DateDayVector) vector;
        return (i, v) -> {
          if (v == null) dates.setNull(i);
          else dates.setSafe(i, Math.toIntExact(((LocalDate) v).toEpochDay()));
        };
      case TIME:
        TimeMicroVector times = (TimeMicroVector) vector;
        return (i, v) -> {
          if (v == null) times.setNull(i);
          else times.setSafe(i, ((LocalTime) v).toNanoOfDay() / 1_000);
        };
      case TIMESTAMP:
        return timestamp(vector, ChronoUnit.MICROS);
      case TIMESTAMP_NANO:
        return timestamp(vector, ChronoUnit.NANOS);
      case STRING:
        VarCharVector strings = (VarCharVector) vector;
        return (i, v) -> {
          if (v == null) strings.setNull(i);
          else strings.setSafe(i, v.toString().getBytes(StandardCharsets.UTF_8));
        };
      case BINARY:
        VarBinaryVector binaries = (VarBinaryVector) vector;
        return (i, v) -> {
          if (v == null) {
            binaries.setNull(i);
          } else {
            ByteBuffer buffer = ((ByteBuffer) v).duplicate();
            binaries.setSafe(i, buffer, buffer.position(), buffer.remaining());
          }
        };
      case UUID:
        FixedSizeBinaryVector uuids = (FixedSizeBinaryVector) vector;
        return (i, v) -> {
          if (v == null) uuids.setNull(i);
          else uuids.setSafe(i, uuidBytes(v));
        };
      case FIXED:
        FixedSizeBinaryVector fixed = (FixedSizeBinaryVector) vector;
        return (i, v) -> {
          if (v == null) fixed.setNull(i);
          else fixed.setSafe(i, bytes(v));
        };
      case UNKNOWN:
        NullVector nulls = (NullVector) vector;
        return (i, v) -> {};
      case STRUCT:
        return structValue((StructVector) vector, requested.asStructType(), source.asStructType());
      case LIST:
        return list((ListVector) vector, requested.asListType(), source.asListType());
      case MAP:
        return map((MapVector) vector, requested.asMapType(), source.asMapType());
      default:
        throw new UnsupportedColumnException(vector.getName(), requested.toString());
    }
  }

  private static ValueWriter timestamp(FieldVector vector, ChronoUnit unit) {
    if (vector instanceof TimeStampMicroTZVector || vector instanceof TimeStampNanoTZVector) {
      org.apache.arrow.vector.TimeStampVector tz = (org.apache.arrow.vector.TimeStampVector) vector;
      return (i, v) -> {
        if (v == null) tz.setNull(i);
        else tz.setSafe(i, unit.between(EPOCH, (OffsetDateTime) v));
      };
    }
    org.apache.arrow.vector.TimeStampVector local =
        (org.apache.arrow.vector.TimeStampVector) vector;
    assert local instanceof TimeStampMicroVector || local instanceof TimeStampNanoVector;
    return (i, v) -> {
      if (v == null) local.setNull(i);
      else local.setSafe(i, unit.between(EPOCH, ((LocalDateTime) v).atOffset(ZoneOffset.UTC)));
    };
  }

  private static ValueWriter structValue(
      StructVector vector, Types.StructType requested, Types.StructType source) {
    StructWriter fields = struct(vector.getChildrenFromFields(), requested, source);
    return (i, v) -> {
      if (v == null) {
        vector.setNull(i);
        fields.writeNull(i);
      } else {
        vector.setIndexDefined(i);
        fields.write(i, (StructLike) v);
      }
    };
  }

  private static ValueWriter list(
      ListVector vector, Types.ListType requested, Types.ListType source) {
    ValueWriter element =
        forVector(vector.getDataVector(), requested.elementType(), source.elementType());
    return (i, v) -> {
      if (v == null) {
        vector.setNull(i);
        return;
      }
      List<?> values = (List<?>) v;
      int start = vector.startNewValue(i);
      for (int j = 0; j < values.size(); j++) {
        element.write(start + j, values.get(j));
      }
      vector.endValue(i, values.size());
    };
  }

  private static ValueWriter map(MapVector vector, Types.MapType requested, Types.MapType source) {
    StructVector entries = (StructVector) vector.getDataVector();
    List<FieldVector> keyValue = entries.getChildrenFromFields();
    ValueWriter key = forVector(keyValue.get(0), requested.keyType(), source.keyType());
    ValueWriter value = forVector(keyValue.get(1), requested.valueType(), source.valueType());
    return (i, v) -> {
      if (v == null) {
        vector.setNull(i);
        return;
      }
      Map<?, ?> values = (Map<?, ?>) v;
      int start = vector.startNewValue(i);
      int j = start;
      for (Map.Entry<?, ?> entry : values.entrySet()) {
        entries.setIndexDefined(j);
        key.write(j, entry.getKey());
        value.write(j, entry.getValue());
        j++;
      }
      vector.endValue(i, values.size());
    };
  }

  private static byte[] uuidBytes(Object value) {
    if (value instanceof UUID) {
      UUID uuid = (UUID) value;
      return ByteBuffer.allocate(16)
          .putLong(uuid.getMostSignificantBits())
          .putLong(uuid.getLeastSignificantBits())
          .array();
    }
    return bytes(value);
  }

  private static byte[] bytes(Object value) {
    if (value instanceof byte[]) {
      return (byte[]) value;
    }
    ByteBuffer buffer = ((ByteBuffer) value).duplicate();
    byte[] bytes = new byte[buffer.remaining()];
    buffer.get(bytes);
    return bytes;
  }
}
