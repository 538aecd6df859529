package io.floe.filter;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import io.floe.iceberg.SliceReads;
import io.floe.spec.DatasetSpec;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every served row satisfies the filter as SQL engines (PyIceberg, Spark, Trino) define it, and no
 * other row is served, whatever files the rows were written to: a null never satisfies a comparison
 * and negation does not change that; NaN satisfies no comparison but {@code !=}. The expected rows
 * are computed here by plain Java over every row, independently of Floe's evaluator, and the table
 * is written so that some files hold only nulls or only NaN in a column (which Iceberg's file
 * statistics prune) while others mix them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlFilterSemanticsTest {
  static final Types.StructType ADDRESS =
      Types.StructType.of(
          optional(20, "city", Types.StringType.get()),
          optional(21, "zip", Types.IntegerType.get()));

  static final Schema SCHEMA =
      new Schema(
          required(1, "id", Types.LongType.get()),
          optional(2, "i", Types.IntegerType.get()),
          optional(3, "l", Types.LongType.get()),
          optional(4, "f", Types.FloatType.get()),
          optional(5, "d", Types.DoubleType.get()),
          optional(6, "dec", Types.DecimalType.of(9, 2)),
          optional(7, "s", Types.StringType.get()),
          optional(8, "b", Types.BooleanType.get()),
          optional(9, "day", Types.DateType.get()),
          optional(10, "t", Types.TimeType.get()),
          optional(11, "ts", Types.TimestampType.withoutZone()),
          optional(12, "tz", Types.TimestampType.withZone()),
          optional(13, "u", Types.UUIDType.get()),
          optional(14, "fx", Types.FixedType.ofLength(4)),
          optional(15, "bin", Types.BinaryType.get()),
          optional(16, "addr", ADDRESS));

  static final String[] WORDS = {"a", "b", "ab", "abc", "", "B", "ba", "zeta"};
  static final String[] CITIES = {"Oslo", "Bergen", "Tromsø"};
  static final UUID[] UUIDS = {
    UUID.fromString("00000000-0000-0000-0000-000000000001"),
    UUID.fromString("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
  };
  static final double[] DOUBLES = {1.5, -2.0, 0.0, -0.0, 3.25, Double.NaN, 100.0};
  static final float[] FLOATS = {0.5f, 0.1f, -1.0f, Float.NaN, 2.0f};

  @TempDir static Path dir;
  private BufferAllocator allocator;
  private TableAccess tables;
  private SliceReads reads;
  private List<Record> rows;
  private String table;

  @BeforeAll
  void writeTable() {
    allocator = new RootAllocator();
    tables = new TableAccess(StorageSettings.defaults());
    reads = new SliceReads(tables, allocator, 1);
    IcebergTestTables.TestTable written = IcebergTestTables.in(dir).create("nulls", SCHEMA);
    rows = new ArrayList<>();
    // Files where every column is null, or every float is NaN: statistics prune them for a
    // comparison, so only the row check decides the mixed files.
    List<Record> allNull = new ArrayList<>();
    List<Record> allNaN = new ArrayList<>();
    for (long id = 0; id < 40; id++) {
      Record row = GenericRecord.create(SCHEMA);
      row.setField("id", id);
      allNull.add(row);
      Record nan = row.copy();
      nan.setField("id", 1_000 + id);
      nan.setField("d", Double.NaN);
      nan.setField("f", Float.NaN);
      nan.setField("i", (int) id);
      allNaN.add(nan);
    }
    for (List<Record> file : List.of(allNull, allNaN, mixed(2_000, 500), mixed(3_000, 500))) {
      written.appendRows(file);
      rows.addAll(file);
    }
    table = written.metadataLocation();
  }

  @AfterAll
  void close() {
    reads.close();
    tables.close();
    assertThat(allocator.getAllocatedMemory()).isZero();
    allocator.close();
  }

  private static List<Record> mixed(long firstId, int count) {
    List<Record> out = new ArrayList<>();
    for (long id = firstId; id < firstId + count; id++) {
      SplittableRandom rnd = new SplittableRandom(id * 31 + 7);
      Record row = GenericRecord.create(SCHEMA);
      row.setField("id", id);
      row.setField("i", maybe(rnd, rnd.nextInt(-10, 10)));
      row.setField("l", maybe(rnd, rnd.nextLong(-5_000_000_000L, 5_000_000_000L)));
      row.setField("f", maybe(rnd, FLOATS[rnd.nextInt(FLOATS.length)]));
      row.setField("d", maybe(rnd, DOUBLES[rnd.nextInt(DOUBLES.length)]));
      row.setField("dec", maybe(rnd, BigDecimal.valueOf(rnd.nextInt(-500, 1_000), 2)));
      row.setField("s", maybe(rnd, WORDS[rnd.nextInt(WORDS.length)]));
      row.setField("b", maybe(rnd, rnd.nextBoolean()));
      row.setField("day", maybe(rnd, LocalDate.of(2024, 1, 1).plusDays(rnd.nextInt(0, 240))));
      row.setField("t", maybe(rnd, LocalTime.ofSecondOfDay(rnd.nextInt(0, 86_400))));
      LocalDateTime local = LocalDateTime.of(2024, 4, 28, 0, 0).plusMinutes(rnd.nextInt(0, 10_000));
      row.setField("ts", maybe(rnd, local));
      row.setField("tz", maybe(rnd, local.atOffset(ZoneOffset.UTC)));
      row.setField("u", maybe(rnd, UUIDS[rnd.nextInt(UUIDS.length)]));
      row.setField("fx", maybe(rnd, new byte[] {0, 1, 2, (byte) rnd.nextInt(0, 4)}));
      row.setField("bin", maybe(rnd, ByteBuffer.wrap(new byte[] {10, (byte) rnd.nextInt(10, 13)})));
      if (rnd.nextInt(6) > 0) {
        Record address = GenericRecord.create(ADDRESS);
        address.setField("city", maybe(rnd, CITIES[rnd.nextInt(CITIES.length)]));
        address.setField("zip", maybe(rnd, rnd.nextInt(0, 300)));
        row.setField("addr", address);
      }
      out.add(row);
    }
    return out;
  }

  private static <T> T maybe(SplittableRandom rnd, T value) {
    return rnd.nextInt(5) == 0 ? null : value;
  }

  static Stream<Arguments> filters() {
    Map<String, Predicate<Record>> cases = new java.util.LinkedHashMap<>();
    cases.put("i < 0", r -> i(r) != null && i(r) < 0);
    cases.put("i != 0", r -> i(r) != null && i(r) != 0);
    cases.put("i <> 0", r -> i(r) != null && i(r) != 0);
    cases.put("i == 1", r -> i(r) != null && i(r) == 1);
    cases.put("not (i = 0)", r -> i(r) != null && i(r) != 0);
    cases.put("i in (0, 1)", r -> i(r) != null && (i(r) == 0 || i(r) == 1));
    cases.put("i not in (0, 1)", r -> i(r) != null && i(r) != 0 && i(r) != 1);
    cases.put("not i in (0, 1)", r -> i(r) != null && i(r) != 0 && i(r) != 1);
    cases.put("i in (0, 1.5, 3000000000)", r -> i(r) != null && i(r) == 0);
    cases.put("i not between -5 and 5", r -> i(r) != null && (i(r) < -5 || i(r) > 5));
    cases.put("i < 1.5", r -> i(r) != null && i(r) <= 1);
    cases.put("i >= -2.5", r -> i(r) != null && i(r) >= -2);
    cases.put("i < 3000000000", r -> i(r) != null);
    cases.put("i > 3000000000", r -> false);
    cases.put("i >= -3000000000 and i is not null", r -> i(r) != null);
    cases.put("3 < i", r -> i(r) != null && i(r) > 3);
    cases.put("l >= 42", r -> l(r) != null && l(r) >= 42);
    cases.put("l < -3000000000", r -> l(r) != null && l(r) < -3_000_000_000L);
    cases.put("d > 0", r -> d(r) != null && d(r) > 0);
    cases.put("d >= 0", r -> d(r) != null && d(r) >= 0);
    cases.put("d = 0", r -> d(r) != null && d(r) == 0.0);
    cases.put("d != 1.5", r -> d(r) != null && d(r) != 1.5);
    cases.put("not (d > 0)", r -> d(r) != null && !(d(r) > 0));
    cases.put("not (d <= 0) and d < 50", r -> d(r) != null && !(d(r) <= 0) && d(r) < 50);
    cases.put("d is nan", r -> d(r) != null && d(r).isNaN());
    cases.put("d is not nan", r -> d(r) != null && !d(r).isNaN());
    cases.put("not (d is nan)", r -> d(r) != null && !d(r).isNaN());
    cases.put("d in (1.5, -2)", r -> d(r) != null && (d(r) == 1.5 || d(r) == -2.0));
    cases.put("d not in (1.5, -2)", r -> d(r) != null && d(r) != 1.5 && d(r) != -2.0);
    cases.put("d in (0)", r -> d(r) != null && d(r) == 0.0);
    cases.put("f <= 0.5", r -> f(r) != null && f(r) <= 0.5f);
    cases.put("f = 0.1", r -> f(r) != null && f(r) == 0.1f);
    cases.put("dec <= 3.5", r -> dec(r) != null && dec(r).compareTo(new BigDecimal("3.5")) <= 0);
    cases.put("dec < 3.555", r -> dec(r) != null && dec(r).compareTo(new BigDecimal("3.555")) < 0);
    cases.put("dec > 3.555", r -> dec(r) != null && dec(r).compareTo(new BigDecimal("3.555")) > 0);
    cases.put("dec = 3.555", r -> false);
    cases.put("dec != 3.555", r -> dec(r) != null);
    cases.put("dec = '1.10'", r -> dec(r) != null && dec(r).compareTo(new BigDecimal("1.1")) == 0);
    cases.put("s != 'a'", r -> s(r) != null && !s(r).equals("a"));
    cases.put("s in ('a', 'b')", r -> s(r) != null && (s(r).equals("a") || s(r).equals("b")));
    cases.put("s not in ('a', 'b')", r -> s(r) != null && !s(r).equals("a") && !s(r).equals("b"));
    cases.put("s like 'a%'", r -> s(r) != null && s(r).startsWith("a"));
    cases.put("s not like 'a%'", r -> s(r) != null && !s(r).startsWith("a"));
    cases.put("s like 'ab'", r -> s(r) != null && s(r).equals("ab"));
    cases.put("s starts with ''", r -> s(r) != null);
    cases.put("s not starts with 'b'", r -> s(r) != null && !s(r).startsWith("b"));
    cases.put("s > 'b'", r -> s(r) != null && s(r).compareTo("b") > 0);
    cases.put("\"s\" = ''", r -> s(r) != null && s(r).isEmpty());
    cases.put(
        "not (i = 0 or s = 'b')",
        r -> i(r) != null && i(r) != 0 && s(r) != null && !s(r).equals("b"));
    cases.put(
        "not (i = 0 and s = 'b')",
        r -> (i(r) != null && i(r) != 0) || (s(r) != null && !s(r).equals("b")));
    cases.put("i = 0 or s is null", r -> (i(r) != null && i(r) == 0) || s(r) == null);
    cases.put("b = true", r -> b(r) != null && b(r));
    cases.put("b != true", r -> b(r) != null && !b(r));
    cases.put("not b = true", r -> b(r) != null && !b(r));
    cases.put("b = 'false'", r -> b(r) != null && !b(r));
    cases.put(
        "day >= '2024-05-01'", r -> day(r) != null && !day(r).isBefore(LocalDate.of(2024, 5, 1)));
    cases.put(
        "day between '2024-01-01' and '2024-03-31'",
        r -> day(r) != null && day(r).isBefore(LocalDate.of(2024, 4, 1)));
    cases.put("t < '12:00:00'", r -> t(r) != null && t(r).isBefore(LocalTime.NOON));
    cases.put(
        "ts >= '2024-05-01T00:00:00'",
        r -> ts(r) != null && !ts(r).isBefore(LocalDateTime.of(2024, 5, 1, 0, 0)));
    cases.put(
        "ts < '2024-05-01'",
        r -> ts(r) != null && ts(r).isBefore(LocalDateTime.of(2024, 5, 1, 0, 0)));
    cases.put(
        "tz >= '2024-05-01T00:00:00+00:00'",
        r ->
            tz(r) != null
                && !tz(r).isBefore(OffsetDateTime.of(2024, 5, 1, 0, 0, 0, 0, ZoneOffset.UTC)));
    cases.put(
        "tz < '2024-05-01T02:00:00+02:00'",
        r ->
            tz(r) != null
                && tz(r).isBefore(OffsetDateTime.of(2024, 5, 1, 0, 0, 0, 0, ZoneOffset.UTC)));
    cases.put("u = '" + UUIDS[1] + "'", r -> u(r) != null && u(r).equals(UUIDS[1]));
    cases.put("u != '" + UUIDS[1] + "'", r -> u(r) != null && !u(r).equals(UUIDS[1]));
    // A transform term of a UUID column is pruned like the column itself (Iceberg orders UUIDs
    // signed, Parquet's statistics unsigned).
    cases.put(
        "{\"type\": \"eq\", \"term\": {\"type\": \"transform\", \"transform\": \"identity\","
            + " \"term\": \"u\"}, \"value\": \""
            + UUIDS[1]
            + "\"}",
        r -> u(r) != null && u(r).equals(UUIDS[1]));
    cases.put("fx = X'00010203'", r -> fx(r) != null && fx(r)[3] == 3);
    cases.put("fx in ('00010200', X'00010201')", r -> fx(r) != null && fx(r)[3] <= 1);
    cases.put("bin = X'0a0b'", r -> bin(r) != null && bin(r).get(1) == 11);
    cases.put("bin != '0A0B'", r -> bin(r) != null && bin(r).get(1) != 11);
    cases.put("addr.city = 'Oslo'", r -> "Oslo".equals(city(r)));
    cases.put("addr.city != 'Oslo'", r -> city(r) != null && !city(r).equals("Oslo"));
    cases.put("not addr.city in ('Oslo')", r -> city(r) != null && !city(r).equals("Oslo"));
    cases.put(
        "addr.zip > 100 and addr.city like 'B%'",
        r -> zip(r) != null && zip(r) > 100 && city(r) != null && city(r).startsWith("B"));
    cases.put("addr is null", r -> r.getField("addr") == null);
    cases.put("addr.city is null", r -> city(r) == null);
    cases.put("true", r -> true);
    cases.put("false or i = 1", r -> i(r) != null && i(r) == 1);
    return cases.entrySet().stream().map(e -> Arguments.of(e.getKey(), e.getValue()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("filters")
  void servesExactlyTheRowsSqlSelects(String filter, Predicate<Record> sql) {
    List<Long> expected =
        rows.stream().filter(sql).map(r -> (Long) r.getField("id")).sorted().toList();

    List<Long> served = ids(reads.readAll(DatasetSpec.of("nulls", table).withFilter(filter)));
    // The same with only the id served: the filter's columns are read for the check alone.
    List<Long> projected =
        ids(
            reads.readAll(
                DatasetSpec.of("nulls", table).withFilter(filter).withColumns(List.of("id"))));

    assertThat(served).as("served with every column").isEqualTo(expected);
    assertThat(projected).as("served with id only").isEqualTo(expected);
  }

  private static List<Long> ids(List<Record> records) {
    return records.stream().map(r -> (Long) r.getField("id")).sorted().toList();
  }

  private static Integer i(Record r) {
    return (Integer) r.getField("i");
  }

  private static Long l(Record r) {
    return (Long) r.getField("l");
  }

  private static Float f(Record r) {
    return (Float) r.getField("f");
  }

  private static Double d(Record r) {
    return (Double) r.getField("d");
  }

  private static BigDecimal dec(Record r) {
    return (BigDecimal) r.getField("dec");
  }

  private static String s(Record r) {
    return (String) r.getField("s");
  }

  private static Boolean b(Record r) {
    return (Boolean) r.getField("b");
  }

  private static LocalDate day(Record r) {
    return (LocalDate) r.getField("day");
  }

  private static LocalTime t(Record r) {
    return (LocalTime) r.getField("t");
  }

  private static LocalDateTime ts(Record r) {
    return (LocalDateTime) r.getField("ts");
  }

  private static OffsetDateTime tz(Record r) {
    return (OffsetDateTime) r.getField("tz");
  }

  private static UUID u(Record r) {
    return (UUID) r.getField("u");
  }

  private static byte[] fx(Record r) {
    return (byte[]) r.getField("fx");
  }

  private static ByteBuffer bin(Record r) {
    return (ByteBuffer) r.getField("bin");
  }

  private static String city(Record r) {
    Record address = (Record) r.getField("addr");
    return address == null ? null : (String) address.getField("city");
  }

  private static Integer zip(Record r) {
    Record address = (Record) r.getField("addr");
    return address == null ? null : (Integer) address.getField("zip");
  }
}
