package io.floe.filter;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.spec.InvalidSpecException;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.BoundLiteralPredicate;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.UnboundPredicate;
import org.apache.iceberg.relocated.com.google.common.collect.ImmutableList;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class RowFilterParserTest {
  private static final Types.StructType ADDRESS =
      Types.StructType.of(
          optional(11, "city", Types.StringType.get()),
          optional(12, "zip", Types.IntegerType.get()));

  private static final Schema SCHEMA =
      new Schema(
          required(1, "id", Types.IntegerType.get()),
          optional(2, "big", Types.LongType.get()),
          optional(3, "ratio", Types.FloatType.get()),
          optional(4, "score", Types.DoubleType.get()),
          optional(5, "price", Types.DecimalType.of(9, 2)),
          optional(6, "name", Types.StringType.get()),
          optional(7, "active", Types.BooleanType.get()),
          optional(8, "born", Types.DateType.get()),
          optional(9, "seen", Types.TimestampType.withoutZone()),
          optional(10, "address", ADDRESS),
          optional(13, "weird col", Types.StringType.get()),
          optional(14, "in", Types.StringType.get()));

  // Every column set, so that range predicates do not depend on how Iceberg's row evaluator
  // orders nulls and NaN (both sort as extremes, unlike SQL).
  private static final List<Record> ROWS =
      ImmutableList.of(
          row(1, 1L, 0.5f, 1.5, "1.25", "alpha", true, "1990-05-01", "2024-01-01T08:00:00")
              .address("Oslo", 150)
              .extra("x", "p"),
          row(2, 3000000000L, 2.5f, -1e3, "3.50", "it's", false, "2000-01-01", "2023-12-31T23:59")
              .address("Bergen", 5003)
              .extra("y", "q"),
          row(3, -7L, 1.25f, 2.75, "10.00", "alphabet", true, "2010-07-15", "2024-06-01T00:00:00")
              .address("Tromso", 9008)
              .extra("weird", "p"),
          row(4, 42L, 3.5f, 3.5, "3.49", "beta", false, "1999-12-31", "2024-01-01T00:00:00")
              .address("Oslo", 151)
              .extra("x", "r"));

  /** Row 5 has only an id, a NaN score and an address with no fields set. */
  private static final List<Record> ROWS_WITH_GAPS =
      ImmutableList.<Record>builder().addAll(ROWS).add(sparseRow()).build();

  @ParameterizedTest(name = "{0} -> [{1}]")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          id = 2                                       | 2
          id != 2                                      | 1,3,4
          id <> 2                                      | 1,3,4
          id < 3                                       | 1,2
          id <= 3                                      | 1,2,3
          id > 3                                       | 4
          id >= 3                                      | 3,4
          id < 3000000000                              | 1,2,3,4
          id > -3000000000                             | 1,2,3,4
          big = 3000000000                             | 2
          big < 0                                      | 3
          big >= 42                                    | 2,4
          ratio < 1.5                                  | 1,3
          ratio = 2.5                                  | 2
          score > -1e3                                 | 1,3,4
          score >= -1E+3                               | 1,2,3,4
          score = 2.75                                 | 3
          score < 2                                    | 1,2
          price >= 3.5                                 | 2,3
          price = 3.50                                 | 2
          price < 3.5                                  | 1,4
          price > 3                                    | 2,3,4
          price between 1.25 and 3.49                  | 1,4
          name = 'it''s'                               | 2
          name >= 'b'                                  | 2,4
          name starts with 'alpha'                     | 1,3
          name not starts with 'alpha'                 | 2,4
          name in ('alpha', 'beta', 'gamma')           | 1,4
          name not in ('alpha', 'beta')                | 2,3
          id in (1, 3, 3000000000)                     | 1,3
          id in (4)                                    | 4
          active = true                                | 1,3
          active = FALSE                               | 2,4
          active != True                               | 2,4
          born < '2000-01-01'                          | 1,4
          born = '2000-01-01'                          | 2
          born between '1995-01-01' and '2005-12-31'   | 2,4
          seen >= '2024-01-01T00:00:00'                | 1,3,4
          seen < '2024-01-01T00:00:00'                 | 2
          address.city = 'Oslo'                        | 1,4
          address.zip between 150 and 151              | 1,4
          address.`city` in ('Bergen', 'Tromso')       | 2,3
          `weird col` = 'x'                            | 1,4
          `in` = 'p'                                   | 1,3
          id between 2 and 3                           | 2,3
          id not between 2 and 3                       | 1,4
          not id between 2 and 3                       | 1,4
          id between 3 and 2                           |
          id = 1 or id = 2 and active = false          | 1,2
          id = 2 and active = false or id = 1          | 1,2
          not active = true and id > 1                 | 2,4
          (id = 1 or id = 2) and active = false        | 2
          not (id = 1 or id = 2)                       | 3,4
          not not id = 1                               | 1
          ((((id = 4))))                               | 4
          id IN (1, 2) AnD name Is Not Null            | 1,2
          id=1 OR(id=4)                                | 1,4
          """)
  void selectsExactlyTheExpectedRows(String filter, String expectedIds) {
    assertThat(matchingIds(filter, ROWS)).isEqualTo(ids(expectedIds));
  }

  @ParameterizedTest(name = "{0} -> [{1}]")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          name is null                                 | 5
          name is not null                             | 1,2,3,4
          not name is null                             | 1,2,3,4
          score is nan                                 | 5
          score is not nan                             | 1,2,3,4
          ratio IS NULL                                | 5
          address.city is null                         | 5
          address is not null                          | 1,2,3,4,5
          score is nan or price is null                | 5
          """)
  void testsForNullAndNaN(String filter, String expectedIds) {
    assertThat(matchingIds(filter, ROWS_WITH_GAPS)).isEqualTo(ids(expectedIds));
  }

  @ParameterizedTest
  @NullAndEmptySource
  @ValueSource(strings = {"   ", " \t\n "})
  void blankFilterMatchesEverything(String filter) {
    assertThat(RowFilterParser.parse(filter)).isSameAs(Expressions.alwaysTrue());
  }

  @Test
  void notBindsTighterThanAndWhichBindsTighterThanOr() {
    assertSameExpression(
        "a = 1 or b = 2 and c = 3",
        Expressions.or(
            Expressions.equal("a", 1),
            Expressions.and(Expressions.equal("b", 2), Expressions.equal("c", 3))));
    assertSameExpression(
        "a = 1 and b = 2 or c = 3",
        Expressions.or(
            Expressions.and(Expressions.equal("a", 1), Expressions.equal("b", 2)),
            Expressions.equal("c", 3)));
    assertSameExpression(
        "not a = 1 and b = 2",
        Expressions.and(Expressions.not(Expressions.equal("a", 1)), Expressions.equal("b", 2)));
    assertSameExpression(
        "(a = 1 or b = 2) and c = 3",
        Expressions.and(
            Expressions.or(Expressions.equal("a", 1), Expressions.equal("b", 2)),
            Expressions.equal("c", 3)));
  }

  @Test
  void theAndOfBetweenBelongsToIt() {
    assertSameExpression(
        "x between 1 and 5 and y = 2",
        Expressions.and(
            Expressions.and(
                Expressions.greaterThanOrEqual("x", 1), Expressions.lessThanOrEqual("x", 5)),
            Expressions.equal("y", 2)));
  }

  @Test
  void chainsOfAndAndOrGroupFromTheLeft() {
    assertSameExpression(
        "a = 1 and b = 2 and c = 3",
        Expressions.and(
            Expressions.and(Expressions.equal("a", 1), Expressions.equal("b", 2)),
            Expressions.equal("c", 3)));
    assertSameExpression(
        "a = 1 or b = 2 or c = 3",
        Expressions.or(
            Expressions.or(Expressions.equal("a", 1), Expressions.equal("b", 2)),
            Expressions.equal("c", 3)));
  }

  @Test
  void buildsTheSameExpressionsAsTheIcebergApi() {
    assertSameExpression(
        "a between 1 and 5",
        Expressions.and(
            Expressions.greaterThanOrEqual("a", 1), Expressions.lessThanOrEqual("a", 5)));
    assertSameExpression(
        "a not between 1 and 5",
        Expressions.not(
            Expressions.and(
                Expressions.greaterThanOrEqual("a", 1), Expressions.lessThanOrEqual("a", 5))));
    assertSameExpression("x in ('a', 'b')", Expressions.in("x", "a", "b"));
    assertSameExpression("x not in (1, 2)", Expressions.notIn("x", 1, 2));
    assertSameExpression("x <> 'y'", Expressions.notEqual("x", "y"));
    assertSameExpression("a.b.c is not null", Expressions.notNull("a.b.c"));
    assertSameExpression("d is not nan", Expressions.notNaN("d"));
    assertSameExpression("`weird col` starts with 'p'", Expressions.startsWith("weird col", "p"));
    assertSameExpression("s not starts with ''", Expressions.notStartsWith("s", ""));
    assertSameExpression("`a``b` = 1", Expressions.equal("a`b", 1));
    assertSameExpression(
        "`a b`.c.\"d\" < 2.5", Expressions.lessThan("a b.c.d", new BigDecimal("2.5")));
    assertSameExpression("a.in = true", Expressions.equal("a.in", true));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          2147483647           | java.lang.Integer | 2147483647
          -2147483648          | java.lang.Integer | -2147483648
          2147483648           | java.lang.Long    | 2147483648
          -2147483649          | java.lang.Long    | -2147483649
          9223372036854775807  | java.lang.Long    | 9223372036854775807
          -9223372036854775808 | java.lang.Long    | -9223372036854775808
          007                  | java.lang.Integer | 7
          99999999999999999999 | java.math.BigDecimal | 99999999999999999999
          3.5                  | java.math.BigDecimal | 3.5
          3.50                 | java.math.BigDecimal | 3.50
          -0.25                | java.math.BigDecimal | -0.25
          1e3                  | java.math.BigDecimal | 1E+3
          -1E-3                | java.math.BigDecimal | -0.001
          -0.0                 | java.math.BigDecimal | 0.0
          'it''s'              | java.lang.String  | it's
          ''''                 | java.lang.String  | '
          TRUE                 | java.lang.Boolean | true
          false                | java.lang.Boolean | false
          """)
  void readsLiteralsAsTheDocumentedJavaTypes(String literal, Class<?> type, String value) {
    Object parsed = literalOf("x = " + literal);

    assertThat(parsed).isInstanceOf(type);
    assertThat(parsed.toString()).isEqualTo(value);
  }

  @Test
  void readsEmptyStringsAndPreservesWhitespaceInsideThem() {
    assertThat(literalOf("x = ''")).isEqualTo("");
    assertThat(literalOf("x = ' a  b '")).isEqualTo(" a  b ");
  }

  @Test
  void fractionalLiteralsBindToFloatDoubleAndDecimalColumns() {
    assertThat(boundLiteral("ratio = 2.5")).isEqualTo(2.5f);
    assertThat(boundLiteral("score = 2.5")).isEqualTo(2.5d);
    assertThat(boundLiteral("score = 0.1")).isEqualTo(0.1d);
    assertThat(boundLiteral("price = 3.5")).isEqualTo(new BigDecimal("3.50"));
    assertThat(boundLiteral("price = 3")).isEqualTo(new BigDecimal("3.00"));
  }

  @Test
  void stringLiteralsBindToDatesTimestampsAndDecimals() {
    assertThat(boundLiteral("born = '1970-01-11'")).isEqualTo(10);
    assertThat(boundLiteral("seen = '1970-01-01T00:00:01'")).isEqualTo(1_000_000L);
    // A quoted number reads like an unquoted one: exactly.
    assertThat(boundLiteral("price = '1234567.89'")).isEqualTo(new BigDecimal("1234567.89"));
    assertThat(boundLiteral("seen = '1970-01-01 00:00:01'")).isEqualTo(1_000_000L);
    assertThat(boundLiteral("seen = '1970-01-02'")).isEqualTo(86_400_000_000L);
  }

  @Test
  void whitespaceIncludesTabsAndLineBreaks() {
    assertThat(matchingIds("id = 1\n\tor\r\nid = 4  ", ROWS)).containsExactly(1, 4);
  }

  @Test
  void acceptsNestingUpToTheLimit() {
    int depth = RowFilterParser.MAX_NESTING;
    String filter = "(".repeat(depth) + "id = 4" + ")".repeat(depth);

    assertThat(matchingIds(filter, ROWS)).containsExactly(4);
  }

  @Test
  void rejectsNestingBeyondTheLimitInsteadOfOverflowingTheStack() {
    int depth = RowFilterParser.MAX_NESTING + 1;
    String filter = "not (".repeat(depth) + "id = 4" + ")".repeat(depth);

    assertThatThrownBy(() -> RowFilterParser.parse(filter))
        .isInstanceOf(RowFilterSyntaxException.class)
        .hasMessageContaining("too deeply nested");
    assertThatThrownBy(() -> RowFilterParser.parse("not ".repeat(100_000) + "id = 4"))
        .isInstanceOf(RowFilterSyntaxException.class)
        .hasMessageContaining("at position 401:");
  }

  @Test
  void errorMessageNamesPositionProblemAndExpectationAndQuotesTheFilter() {
    assertThatThrownBy(() -> RowFilterParser.parse("rating >= "))
        .isInstanceOf(RowFilterSyntaxException.class)
        .isInstanceOf(InvalidSpecException.class)
        .hasMessage(
            "Invalid row filter at position 11: expected a value after '>=' but found end of"
                + " input in \"rating >= \"");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          "rating >= "                   | 11 | expected a value after '>=' but found end of input
          name = 'abc                    | 8  | unterminated string, expected a closing ' before end of input
          id = 1 ; id = 2                | 8  | unexpected character ';'
          id = 1 && id = 2               | 8  | unexpected character '&'
          id = 1 and                     | 11 | expected a column name, 'not' or '(' after 'and' but found end of input
          not                            | 4  | expected a column name, 'not' or '(' after 'not' but found end of input
          id =                           | 5  | expected a value after '=' but found end of input
          id = 1 id = 2                  | 8  | expected 'and', 'or' or end of input after number 1 but found name 'id'
          name = 'a' 'b'                 | 12 | expected 'and', 'or' or end of input after string 'a' but found string 'b'
          id = 1 and or id = 2           | 12 | expected a column name, 'not' or '(' after 'and' but found keyword 'or'
          id in ()                       | 8  | expected at least one value in the list but found ')'
          id in (1, 2                    | 12 | expected ',' or ')' after number 2 in the value list but found end of input
          id in (1 2)                    | 10 | expected ',' or ')' after number 1 in the value list but found number 2
          id in (1,, 2)                  | 10 | expected a value after ',' but found ','
          id in 1                        | 7  | expected '(' after 'in' but found number 1
          (id = 1                        | 8  | expected ')' after number 1 to close the '(' at position 1 but found end of input
          ((id = 1)                      | 10 | expected ')' after ')' to close the '(' at position 1 but found end of input
          id = 1)                        | 7  | unmatched ')', expected 'and', 'or' or end of input after number 1
          ()                             | 2  | expected a column name, 'not' or '(' after '(' but found ')'
          id = and                       | 6  | expected a value after '=' but found keyword 'and'
          id = null                      | 6  | expected a value after '=' (test for null with 'is null' or 'is not null') but found keyword 'null'
          id in (1, nan)                 | 11 | expected a value after ',' but found keyword 'nan'
          in = 'p'                       | 1  | expected a column name, 'not' or '(' but found keyword 'in' (write `in` for a column of that name)
          = 1                            | 1  | expected a column name, 'not' or '(' but found '='
          1 = 2                          | 5  | expected a column name after '=' but found number 2
          1 and id = 2                   | 3  | expected a comparison (=, !=, <>, <, <=, >, >=) and a column name after number 1 but found keyword 'and'
          id 1                           | 4  | after column 'id' but found number 1
          id 1 'unterminated             | 4  | after column 'id' but found number 1
          id is 1                        | 7  | expected 'null', 'nan' or 'not' after 'is' but found number 1
          id is not                      | 10 | expected 'null' or 'nan' after 'not' but found end of input
          id not 1                       | 8  | expected 'in', 'starts with', 'like' or 'between' after 'not' but found number 1
          name starts 'a'                | 13 | expected 'with' after 'starts' but found string 'a'
          name starts with 5             | 18 | expected a quoted string after 'starts with' but found number 5
          id between 1                   | 13 | expected 'and' after the lower bound of 'between' but found end of input
          id between 1 or 2              | 14 | expected 'and' after the lower bound of 'between' but found keyword 'or'
          `weird col = 1                 | 1  | unterminated quoted name, expected a closing ` before end of input
          `` = 1                         | 1  | empty quoted name, expected at least one character between backquotes
          a. = 1                         | 3  | expected a name after '.' but found character U+0020
          a.1 = 1                        | 3  | expected a name after '.' but found '1'
          id = 1.                        | 8  | expected a digit after '.' but found end of input
          id = .5                        | 6  | unexpected character '.'
          id = 1e                        | 8  | expected a digit in the exponent but found end of input
          id = - 1                       | 7  | expected a digit after '-' but found character U+0020
          id = 12abc                     | 8  | unexpected character 'a' after number 12, expected a space, an operator or a parenthesis
          id = 1.2.3                     | 9  | unexpected character '.' after number 1.2
          id ! 1                         | 4  | unexpected character '!', expected '!='
          id = 1 # comment               | 8  | unexpected character '#'
          name like 'a%b'                | 11 | unsupported pattern 'a%b', expected '%' only at the end
          name like 5                    | 11 | expected a quoted pattern after 'like' but found number 5
          b = X'0g'                      | 5  | invalid binary literal X'0g', expected an even number of hex digits
          b = x'abc'                     | 5  | invalid binary literal x'abc'
          "" = 1                         | 1  | empty quoted name, expected at least one character between double quotes
          """)
  void rejectsMalformedFiltersWithPositionAndExpectation(
      String filter, int position, String detail) {
    assertThatThrownBy(() -> RowFilterParser.parse(filter))
        .isInstanceOfSatisfying(
            RowFilterSyntaxException.class,
            e -> {
              assertThat(e.position()).isEqualTo(position);
              assertThat(e.filter()).isEqualTo(filter);
              assertThat(e.getMessage())
                  .startsWith("Invalid row filter at position " + position + ": ")
                  .contains(detail)
                  .endsWith(" in \"" + filter + "\"");
            });
  }

  @Test
  void explainsThatDoubleQuotesNameColumnsNotStrings() {
    assertThatThrownBy(() -> RowFilterParser.parse("name = \"alpha\""))
        .isInstanceOf(RowFilterSyntaxException.class)
        .hasMessageContaining(
            "at position 8: expected a value after '=' but found column \"alpha\"")
        .hasMessageContaining("'single quotes' for a string");
  }

  @Test
  void reportsTheLeftmostProblemEvenWhenLaterTextCannotBeTokenized() {
    assertThatThrownBy(() -> RowFilterParser.parse("id = = 'unterminated"))
        .isInstanceOf(RowFilterSyntaxException.class)
        .hasMessageContaining("at position 6: expected a value after '=' but found '='");
  }

  @Test
  void countsPositionsAcrossLineBreaks() {
    assertThatThrownBy(() -> RowFilterParser.parse("id = 1\nand\n"))
        .isInstanceOfSatisfying(
            RowFilterSyntaxException.class, e -> assertThat(e.position()).isEqualTo(12));
  }

  @Test
  void aLongFilterIsQuotedAroundItsErrorAndLongTokensByTheirEnds() {
    String prefix = "id = 1 and ".repeat(10_000);
    String filter = prefix + "name = 'a" + "x".repeat(5_000) + "' 'z" + "y".repeat(5_000) + "'";

    assertThatThrownBy(() -> RowFilterParser.parse(filter))
        .isInstanceOfSatisfying(
            RowFilterSyntaxException.class,
            e -> {
              assertThat(e.filter()).isEqualTo(filter);
              assertThat(e.getMessage())
                  .startsWith("Invalid row filter at position " + (prefix.length() + 5_012) + ":")
                  // The token found, by its ends and length, then the text around the error.
                  .contains(
                      "but found string 'z" + "y".repeat(62) + "…" + "y".repeat(63) + "' (5003")
                  .contains("(" + filter.length() + " characters)")
                  .doesNotContain("id = 1 and ".repeat(20));
              assertThat(e.getMessage().length()).isLessThan(600);
            });
  }

  @Test
  void unknownColumnsAreReportedWhenBound() {
    Expression expr = RowFilterParser.parse("missing = 1");

    assertThatThrownBy(() -> FilterBinding.bind(expr, SCHEMA, "missing = 1"))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("unknown column 'missing'")
        .hasMessageContaining("address.city");
  }

  private static void assertSameExpression(String filter, Expression expected) {
    assertThat(RowFilterParser.parse(filter)).hasToString(expected.toString());
  }

  private static Object literalOf(String filter) {
    return ((UnboundPredicate<?>) RowFilterParser.parse(filter)).literal().value();
  }

  private static Object boundLiteral(String filter) {
    Expression typed = FilterBinding.bind(RowFilterParser.parse(filter), SCHEMA, filter);
    Expression bound = Binder.bind(SCHEMA.asStruct(), typed, true);
    return ((BoundLiteralPredicate<?>) bound).literal().value();
  }

  private static List<Integer> matchingIds(String filter, List<Record> rows) {
    Expression typed = FilterBinding.bind(RowFilterParser.parse(filter), SCHEMA, filter);
    RowPredicate predicate = new RowPredicate(SCHEMA.asStruct(), typed);
    return rows.stream()
        .filter(predicate::test)
        .map(row -> (Integer) row.getField("id"))
        .collect(Collectors.toList());
  }

  private static List<Integer> ids(String csv) {
    if (csv == null) {
      return List.of();
    }
    return Arrays.stream(csv.split(",")).map(String::trim).map(Integer::valueOf).toList();
  }

  private static RowBuilder row(
      int id,
      long big,
      float ratio,
      double score,
      String price,
      String name,
      boolean active,
      String born,
      String seen) {
    Record record = GenericRecord.create(SCHEMA);
    record.setField("id", id);
    record.setField("big", big);
    record.setField("ratio", ratio);
    record.setField("score", score);
    record.setField("price", new BigDecimal(price));
    record.setField("name", name);
    record.setField("active", active);
    record.setField("born", LocalDate.parse(born));
    record.setField("seen", LocalDateTime.parse(seen));
    return new RowBuilder(record);
  }

  private static Record sparseRow() {
    Record record = GenericRecord.create(SCHEMA);
    record.setField("id", 5);
    record.setField("score", Double.NaN);
    record.setField("address", GenericRecord.create(ADDRESS));
    return record;
  }

  /** Fills the remaining columns of a row, so the row table above stays readable. */
  private record RowBuilder(Record record) {
    RowBuilder address(String city, int zip) {
      Record address = GenericRecord.create(ADDRESS);
      address.setField("city", city);
      address.setField("zip", zip);
      record.setField("address", address);
      return this;
    }

    Record extra(String weird, String in) {
      record.setField("weird col", weird);
      record.setField("in", in);
      return record;
    }
  }
}
