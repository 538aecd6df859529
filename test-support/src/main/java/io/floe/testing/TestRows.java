package io.floe.testing;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;

import java.math.BigDecimal;
import java.math.BigInteger;
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
import java.util.SplittableRandom;
import java.util.UUID;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;

/**
 * Schemas and deterministic row generators for test tables.
 *
 * <p>Every value of a row is drawn from a random stream seeded by {@code (seed, id)} alone, so the
 * same row comes out whatever file or order it is written in, and a test can compare what it reads
 * with {@code generator.row(id)}.
 */
public final class TestRows {
  /**
   * Every primitive Iceberg type plus struct, list, map and list of struct; all but id optional.
   */
  public static final Schema ALL_TYPES =
      new Schema(
          required(1, "id", Types.LongType.get()),
          optional(2, "bool_col", Types.BooleanType.get()),
          optional(3, "int_col", Types.IntegerType.get()),
          optional(4, "long_col", Types.LongType.get()),
          optional(5, "float_col", Types.FloatType.get()),
          optional(6, "double_col", Types.DoubleType.get()),
          optional(7, "dec_9_2", Types.DecimalType.of(9, 2)),
          optional(8, "dec_38_10", Types.DecimalType.of(38, 10)),
          optional(9, "date_col", Types.DateType.get()),
          optional(10, "time_col", Types.TimeType.get()),
          optional(11, "ts_col", Types.TimestampType.withoutZone()),
          optional(12, "tstz_col", Types.TimestampType.withZone()),
          optional(13, "string_col", Types.StringType.get()),
          optional(14, "uuid_col", Types.UUIDType.get()),
          optional(15, "fixed_col", Types.FixedType.ofLength(8)),
          optional(16, "binary_col", Types.BinaryType.get()),
          optional(
              17,
              "struct_col",
              Types.StructType.of(
                  optional(18, "a", Types.IntegerType.get()),
                  optional(19, "b", Types.StringType.get()))),
          optional(20, "int_list", Types.ListType.ofOptional(21, Types.IntegerType.get())),
          optional(
              22,
              "str_int_map",
              Types.MapType.ofOptional(23, 24, Types.StringType.get(), Types.IntegerType.get())),
          optional(
              25,
              "struct_list",
              Types.ListType.ofOptional(
                  26,
                  Types.StructType.of(
                      optional(27, "x", Types.LongType.get()),
                      optional(28, "y", Types.StringType.get())))));

  /** A small, flat event table that partitions naturally. No nulls. */
  public static final Schema EVENTS =
      new Schema(
          required(1, "id", Types.LongType.get()),
          optional(2, "category", Types.StringType.get()),
          optional(3, "user_id", Types.IntegerType.get()),
          optional(4, "amount", Types.DoubleType.get()),
          optional(5, "event_time", Types.TimestampType.withZone()));

  /** The values {@link #events} draws {@code category} from. */
  public static final List<String> CATEGORIES = List.of("books", "games", "music", "tools");

  /** {@link #events} spreads {@code event_time} over this many days from {@link #EVENTS_START}. */
  public static final int EVENT_DAYS = 3;

  public static final OffsetDateTime EVENTS_START =
      OffsetDateTime.of(2024, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);

  /** {@link #EVENTS} by {@code identity(category)} and {@code day(event_time)}. */
  public static final PartitionSpec EVENTS_BY_CATEGORY_AND_DAY =
      PartitionSpec.builderFor(EVENTS).identity("category").day("event_time").build();

  /** {@link #EVENTS} by {@code identity(category)} and {@code bucket(4, user_id)}. */
  public static final PartitionSpec EVENTS_BY_CATEGORY_AND_USER_BUCKET =
      PartitionSpec.builderFor(EVENTS).identity("category").bucket("user_id", 4).build();

  private static final OffsetDateTime EPOCH_UTC =
      OffsetDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);
  private static final long MICROS_PER_DAY = 86_400_000_000L;
  private static final String[] WORDS = {
    "alpha", "beta", "gamma", "delta", "ice", "floe", "arrow", "flight", "grüße", "日本語", "", "x"
  };

  private TestRows() {}

  /**
   * Rows for {@link #ALL_TYPES}. Each optional column is null in roughly one row in eight, and
   * always when {@code id % 23} equals its position, so even a few dozen rows hold a null in every
   * column. Nested values hold nulls and empty collections too.
   */
  public static RowGenerator allTypes(long seed) {
    Types.StructType structType = ALL_TYPES.findType("struct_col").asStructType();
    Types.StructType elementType =
        ALL_TYPES.findType("struct_list").asListType().elementType().asStructType();
    int columns = ALL_TYPES.columns().size();
    return id -> {
      SplittableRandom rnd = random(seed, id);
      Record row = GenericRecord.create(ALL_TYPES);
      row.set(0, id);
      for (int pos = 1; pos < columns; pos++) {
        boolean isNull = rnd.nextInt(8) == 0 || Math.floorMod(id, 23) == pos;
        row.set(pos, isNull ? null : allTypesValue(pos, rnd, structType, elementType));
      }
      return row;
    };
  }

  /** Rows for {@link #EVENTS}: four categories, 1,000 users, three days of January 2024. */
  public static RowGenerator events(long seed) {
    return id -> {
      SplittableRandom rnd = random(seed, id);
      Record row = GenericRecord.create(EVENTS);
      row.set(0, id);
      row.set(1, CATEGORIES.get(rnd.nextInt(CATEGORIES.size())));
      row.set(2, rnd.nextInt(1_000));
      row.set(3, Math.round(rnd.nextDouble(0, 1_000) * 100) / 100.0);
      row.set(4, EVENTS_START.plus(rnd.nextLong(EVENT_DAYS * MICROS_PER_DAY), ChronoUnit.MICROS));
      return row;
    };
  }

  /** The rows for ids {@code [from, to)}, in id order. */
  public static List<Record> rows(RowGenerator generator, long from, long to) {
    List<Record> rows = new ArrayList<>();
    for (long id = from; id < to; id++) {
      rows.add(generator.row(id));
    }
    return rows;
  }

  // A fresh stream per row keeps rows independent of write order and file layout.
  private static SplittableRandom random(long seed, long id) {
    return new SplittableRandom(seed * 0x9E3779B97F4A7C15L + id);
  }

  private static Object allTypesValue(
      int pos, SplittableRandom rnd, Types.StructType structType, Types.StructType elementType) {
    switch (pos) {
      case 1:
        return rnd.nextBoolean();
      case 2:
        return rnd.nextInt();
      case 3:
        return rnd.nextLong();
      case 4:
        return (float) rnd.nextDouble(-1e6, 1e6);
      case 5:
        return rnd.nextDouble(-1e12, 1e12);
      case 6:
        return BigDecimal.valueOf(rnd.nextLong(-999_999_999L, 1_000_000_000L), 2);
      case 7:
        // 125 bits stay below 10^38 - 1, the largest unscaled value of precision 38.
        BigInteger unscaled =
            BigInteger.valueOf(rnd.nextLong() >>> 2)
                .shiftLeft(63)
                .or(BigInteger.valueOf(rnd.nextLong() >>> 1));
        return new BigDecimal(rnd.nextBoolean() ? unscaled : unscaled.negate(), 10);
      case 8:
        return LocalDate.ofEpochDay(rnd.nextInt(-20_000, 40_000));
      case 9:
        // Iceberg stores time, timestamp and timestamptz in microseconds: no nanos here.
        return LocalTime.ofNanoOfDay(rnd.nextLong(MICROS_PER_DAY) * 1_000);
      case 10:
        return micros(rnd).toLocalDateTime();
      case 11:
        return micros(rnd);
      case 12:
        return text(rnd);
      case 13:
        return new UUID(rnd.nextLong(), rnd.nextLong());
      case 14:
        return bytes(rnd, 8);
      case 15:
        return ByteBuffer.wrap(bytes(rnd, rnd.nextInt(17)));
      case 16:
        return struct(structType, rnd);
      case 17:
        return intList(rnd);
      case 18:
        return map(rnd);
      case 19:
        return structList(elementType, rnd);
      default:
        throw new IllegalArgumentException("No column at position " + pos);
    }
  }

  private static OffsetDateTime micros(SplittableRandom rnd) {
    // About 1940 to 2070: instants before 1970 are negative, where rounding bugs tend to hide.
    return EPOCH_UTC.plus(
        rnd.nextLong(-30 * 365 * MICROS_PER_DAY, 100 * 365 * MICROS_PER_DAY), ChronoUnit.MICROS);
  }

  private static String text(SplittableRandom rnd) {
    int words = rnd.nextInt(4);
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < words; i++) {
      if (i > 0) {
        text.append(' ');
      }
      text.append(WORDS[rnd.nextInt(WORDS.length)]);
    }
    return text.toString();
  }

  private static byte[] bytes(SplittableRandom rnd, int length) {
    byte[] bytes = new byte[length];
    for (int i = 0; i < length; i++) {
      bytes[i] = (byte) rnd.nextInt(256);
    }
    return bytes;
  }

  private static Record struct(Types.StructType type, SplittableRandom rnd) {
    Record struct = GenericRecord.create(type);
    struct.set(0, rnd.nextInt(4) == 0 ? null : rnd.nextInt(-1_000, 1_000));
    struct.set(1, rnd.nextInt(4) == 0 ? null : text(rnd));
    return struct;
  }

  private static List<Integer> intList(SplittableRandom rnd) {
    int size = rnd.nextInt(5);
    List<Integer> list = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      list.add(rnd.nextInt(5) == 0 ? null : rnd.nextInt(-100, 100));
    }
    return list;
  }

  private static Map<String, Integer> map(SplittableRandom rnd) {
    int size = rnd.nextInt(4);
    Map<String, Integer> map = new LinkedHashMap<>();
    for (int i = 0; i < size; i++) {
      map.put("k" + i, rnd.nextInt(5) == 0 ? null : rnd.nextInt(1_000));
    }
    return map;
  }

  private static List<Record> structList(Types.StructType elementType, SplittableRandom rnd) {
    int size = rnd.nextInt(4);
    List<Record> list = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      if (rnd.nextInt(5) == 0) {
        list.add(null);
      } else {
        Record element = GenericRecord.create(elementType);
        element.set(0, rnd.nextInt(4) == 0 ? null : rnd.nextLong());
        element.set(1, rnd.nextInt(4) == 0 ? null : text(rnd));
        list.add(element);
      }
    }
    return list;
  }
}
