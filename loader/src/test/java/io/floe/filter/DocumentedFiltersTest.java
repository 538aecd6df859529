package io.floe.filter;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * Every filter shown in docs/filter-syntax.md's examples and in README.md parses, binds, and keeps
 * exactly the rows its meaning (written here as plain Java, nulls and NaN as SQL treats them)
 * selects. Read from the documents themselves, so the examples cannot drift from what works.
 */
class DocumentedFiltersTest {
  private static final Types.StructType ADDRESS =
      Types.StructType.of(optional(101, "city", Types.StringType.get()));

  private static final Schema SCHEMA =
      new Schema(
          required(1, "id", Types.LongType.get()),
          optional(2, "rating", Types.IntegerType.get()),
          optional(3, "genre", Types.StringType.get()),
          optional(4, "status", Types.StringType.get()),
          optional(5, "price", Types.DecimalType.of(9, 2)),
          optional(6, "name", Types.StringType.get()),
          optional(7, "address", ADDRESS),
          optional(8, "display name", Types.StringType.get()),
          optional(9, "seen", Types.TimestampType.withoutZone()),
          optional(10, "score", Types.DoubleType.get()),
          optional(11, "big", Types.LongType.get()),
          optional(12, "day", Types.DateType.get()),
          optional(13, "label", Types.IntegerType.get()),
          optional(14, "ts", Types.TimestampType.withZone()),
          optional(15, "payload", Types.BinaryType.get()),
          optional(16, "user_id", Types.LongType.get()),
          optional(17, "item_id", Types.LongType.get()));

  /** The meaning of each documented example, in the order the documents show them. */
  private static final List<Predicate<Record>> MEANINGS =
      List.of(
          r -> gt(r, "rating", 3) && in(r, "genre", "jazz", "blues"),
          r -> r.getField("status") != null && !r.getField("status").equals("deleted"),
          r ->
              dec(r) != null
                  && dec(r).compareTo(BigDecimal.TEN) >= 0
                  && dec(r).compareTo(new BigDecimal("99.99")) <= 0
                  && str(r, "name") != null
                  && !str(r, "name").startsWith("test_"),
          r ->
              "Oslo".equals(city(r))
                  && str(r, "display name") != null
                  && !str(r, "display name").isEmpty(),
          r ->
              r.getField("seen") != null
                  && !seen(r).isBefore(LocalDateTime.of(2024, 1, 1, 0, 0))
                  && seen(r).isBefore(LocalDateTime.of(2024, 2, 1, 0, 0)),
          r ->
              score(r) != null
                  && !score(r).isNaN()
                  && r.getField("big") != null
                  && (Long) r.getField("big") > 3_000_000_000L,
          r ->
              r.getField("day") != null
                  && !((LocalDate) r.getField("day")).isBefore(LocalDate.of(2024, 5, 1))
                  && Integer.valueOf(1).equals(r.getField("label"))
                  && str(r, "name") != null
                  && str(r, "name").startsWith("user_"),
          r ->
              score(r) != null
                  && score(r) > 0
                  && r.getField("ts") != null
                  && !((OffsetDateTime) r.getField("ts"))
                      .isBefore(OffsetDateTime.of(2024, 5, 1, 0, 0, 0, 0, ZoneOffset.UTC))
                  && ByteBuffer.wrap(new byte[] {0, (byte) 0xff}).equals(r.getField("payload")),
          // The JSON form of the first example.
          r -> gt(r, "rating", 3) && in(r, "genre", "jazz", "blues"),
          // README.md's load example.
          r ->
              r.getField("day") != null
                  && !((LocalDate) r.getField("day")).isBefore(LocalDate.of(2024, 5, 1)));

  @Test
  void everyDocumentedFilterKeepsTheRowsItsMeaningSelects() throws IOException {
    List<String> filters = documentedFilters();
    assertThat(filters).as("examples found in the documents").hasSize(MEANINGS.size());
    List<Record> rows = rows();
    for (int i = 0; i < filters.size(); i++) {
      String filter = filters.get(i);
      RowPredicate predicate =
          new RowPredicate(
              SCHEMA.asStruct(), FilterBinding.bind(RowFilters.parse(filter), SCHEMA, filter));
      List<Long> kept = new ArrayList<>();
      List<Long> meant = new ArrayList<>();
      for (Record row : rows) {
        if (predicate.test(row)) {
          kept.add((Long) row.getField("id"));
        }
        if (MEANINGS.get(i).test(row)) {
          meant.add((Long) row.getField("id"));
        }
      }
      assertThat(kept).as(filter).isEqualTo(meant);
      assertThat(meant)
          .as("rows that satisfy %s (the test rows must reach it)", filter)
          .isNotEmpty();
    }
  }

  /** The text examples and the JSON example of docs/filter-syntax.md, then README's filter. */
  private static List<String> documentedFilters() throws IOException {
    Path root = Path.of("").toAbsolutePath().getParent();
    String syntax = Files.readString(root.resolve("docs/filter-syntax.md"));
    String examples = syntax.substring(syntax.indexOf("## Examples"));
    List<String> filters = new ArrayList<>();
    Matcher text = Pattern.compile("```\\n(.*?)```", Pattern.DOTALL).matcher(examples);
    if (text.find()) {
      for (String line : text.group(1).split("\\n")) {
        if (!line.isBlank()) {
          filters.add(line.trim());
        }
      }
    }
    Matcher json = Pattern.compile("```json\\n(.*?)```", Pattern.DOTALL).matcher(examples);
    if (json.find()) {
      filters.add(json.group(1).trim());
    }
    String readme = Files.readString(root.resolve("README.md"));
    Matcher load = Pattern.compile("\"filter\": \"([^\"]*)\"").matcher(readme);
    while (load.find()) {
      filters.add(load.group(1));
    }
    return filters;
  }

  private static List<Record> rows() {
    String[] genres = {"jazz", "blues", "rock", null};
    String[] statuses = {"active", "deleted", null};
    String[] names = {"user_1", "test_2", "alice", null};
    String[] cities = {"Oslo", "Bergen", null};
    double[] scores = {0.5, -1.0, Double.NaN, 7.25};
    List<Record> rows = new ArrayList<>();
    for (long id = 0; id < 400; id++) {
      SplittableRandom rnd = new SplittableRandom(id);
      Record row = GenericRecord.create(SCHEMA);
      row.setField("id", id);
      row.setField("rating", rnd.nextInt(6) == 0 ? null : rnd.nextInt(0, 6));
      row.setField("genre", genres[rnd.nextInt(genres.length)]);
      row.setField("status", statuses[rnd.nextInt(statuses.length)]);
      row.setField(
          "price", rnd.nextInt(5) == 0 ? null : BigDecimal.valueOf(rnd.nextInt(0, 15_000), 2));
      row.setField("name", names[rnd.nextInt(names.length)]);
      Record address = GenericRecord.create(ADDRESS);
      address.setField("city", cities[rnd.nextInt(cities.length)]);
      row.setField("address", rnd.nextInt(5) == 0 ? null : address);
      row.setField("display name", rnd.nextBoolean() ? "" : rnd.nextBoolean() ? "Ann" : null);
      row.setField(
          "seen",
          rnd.nextInt(5) == 0
              ? null
              : LocalDateTime.of(2023, 12, 20, 0, 0).plusDays(rnd.nextInt(50)));
      row.setField("score", rnd.nextInt(6) == 0 ? null : scores[rnd.nextInt(scores.length)]);
      row.setField("big", rnd.nextInt(5) == 0 ? null : rnd.nextLong(0, 6_000_000_000L));
      row.setField(
          "day", rnd.nextInt(5) == 0 ? null : LocalDate.of(2024, 4, 20).plusDays(rnd.nextInt(20)));
      row.setField("label", rnd.nextInt(5) == 0 ? null : rnd.nextInt(0, 2));
      row.setField(
          "ts",
          rnd.nextInt(5) == 0
              ? null
              : OffsetDateTime.of(
                      2024, 4, 30, 22, 0, 0, 0, ZoneOffset.ofHours(2 * rnd.nextInt(-1, 2)))
                  .plusHours(rnd.nextInt(6)));
      row.setField(
          "payload",
          rnd.nextInt(3) == 0
              ? null
              : ByteBuffer.wrap(new byte[] {0, (byte) (rnd.nextBoolean() ? 0xff : 1)}));
      rows.add(row);
    }
    return rows;
  }

  private static boolean gt(Record r, String column, int bound) {
    Integer value = (Integer) r.getField(column);
    return value != null && value > bound;
  }

  private static boolean in(Record r, String column, String... values) {
    Object value = r.getField(column);
    return value != null && List.of(values).contains(value);
  }

  private static String str(Record r, String column) {
    return (String) r.getField(column);
  }

  private static BigDecimal dec(Record r) {
    return (BigDecimal) r.getField("price");
  }

  private static Double score(Record r) {
    return (Double) r.getField("score");
  }

  private static LocalDateTime seen(Record r) {
    return (LocalDateTime) r.getField("seen");
  }

  private static String city(Record r) {
    Record address = (Record) r.getField("address");
    return address == null ? null : (String) address.getField("city");
  }
}
