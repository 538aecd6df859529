package io.floe.testing;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Reads Arrow batches back into Iceberg generic records, written independently of the production
 * writer so that tests can compare what Floe serves with what Iceberg's own reader returns.
 */
public final class ArrowRecords {
  private static final OffsetDateTime EPOCH =
      OffsetDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);

  private ArrowRecords() {}

  public static List<Record> read(VectorSchemaRoot root, Schema schema) {
    List<Record> records = new ArrayList<>(root.getRowCount());
    List<Types.NestedField> fields = schema.columns();
    for (int row = 0; row < root.getRowCount(); row++) {
      Record record = GenericRecord.create(schema);
      for (int col = 0; col < fields.size(); col++) {
        record.set(col, value(root.getVector(col), fields.get(col).type(), row));
      }
      records.add(record);
    }
    return records;
  }

  private static Object value(FieldVector vector, Type type, int row) {
    if (vector.isNull(row)) {
      return null;
    }
    switch (type.typeId()) {
      case BOOLEAN:
        return ((BitVector) vector).get(row) == 1;
      case INTEGER:
        return ((IntVector) vector).get(row);
      case LONG:
        return ((BigIntVector) vector).get(row);
      case FLOAT:
        return ((Float4Vector) vector).get(row);
      case DOUBLE:
        return ((Float8Vector) vector).get(row);
      case DECIMAL:
        BigDecimal decimal = ((DecimalVector) vector).getObject(row);
        return decimal;
      case DATE:
        return LocalDate.ofEpochDay(((DateDayVector) vector).get(row));
      case TIME:
        return LocalTime.ofNanoOfDay(((TimeMicroVector) vector).get(row) * 1_000);
      case TIMESTAMP:
        long micros = ((TimeStampVector) vector).get(row);
        OffsetDateTime instant = EPOCH.plus(micros, ChronoUnit.MICROS);
        return ((Types.TimestampType) type).shouldAdjustToUTC()
            ? instant
            : instant.toLocalDateTime();
      case STRING:
        return new String(
            ((VarCharVector) vector).get(row), java.nio.charset.StandardCharsets.UTF_8);
      case BINARY:
        return ByteBuffer.wrap(((VarBinaryVector) vector).get(row));
      case UUID:
        ByteBuffer uuid = ByteBuffer.wrap(((FixedSizeBinaryVector) vector).get(row));
        return new UUID(uuid.getLong(), uuid.getLong());
      case FIXED:
        return ((FixedSizeBinaryVector) vector).get(row);
      case STRUCT:
        StructVector struct = (StructVector) vector;
        Types.StructType structType = type.asStructType();
        Record record = GenericRecord.create(structType);
        for (int i = 0; i < structType.fields().size(); i++) {
          record.set(
              i,
              value(
                  (FieldVector) struct.getChildByOrdinal(i),
                  structType.fields().get(i).type(),
                  row));
        }
        return record;
      case LIST:
        ListVector list = (ListVector) vector;
        List<Object> elements = new ArrayList<>();
        int start = list.getElementStartIndex(row);
        int end = list.getElementEndIndex(row);
        for (int i = start; i < end; i++) {
          elements.add(value(list.getDataVector(), type.asListType().elementType(), i));
        }
        return elements;
      case MAP:
        MapVector map = (MapVector) vector;
        StructVector entries = (StructVector) map.getDataVector();
        Map<Object, Object> values = new LinkedHashMap<>();
        for (int i = map.getElementStartIndex(row); i < map.getElementEndIndex(row); i++) {
          values.put(
              value((FieldVector) entries.getChildByOrdinal(0), type.asMapType().keyType(), i),
              value((FieldVector) entries.getChildByOrdinal(1), type.asMapType().valueType(), i));
        }
        return values;
      default:
        throw new UnsupportedOperationException("No test reader for " + type);
    }
  }
}
