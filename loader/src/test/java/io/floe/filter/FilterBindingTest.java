package io.floe.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.spec.InvalidSpecException;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A filter that parses but does not fit the table is refused with a message naming the column, its
 * type, the value and what was expected; filters also arrive as Iceberg JSON expressions.
 */
class FilterBindingTest {
  private static Expression bind(String filter) {
    return FilterBinding.bind(RowFilters.parse(filter), SqlFilterSemanticsTest.SCHEMA, filter);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          day >= '2024-13-01'        | Invalid literal '2024-13-01' for column 'day' of type date | expected a date as 'YYYY-MM-DD'
          day = 5                    | Invalid literal 5 for column 'day' of type date           | expected a date
          t < '25:00'                | Invalid literal '25:00' for column 't' of type time       | expected a time
          ts > '2024-05-01T00:00Z'   | column 'ts' of type timestamp                            | without offset
          tz > '2024-05-01T00:00:00' | column 'tz' of type timestamptz                          | with a UTC offset
          u = 'not-a-uuid'           | Invalid literal 'not-a-uuid' for column 'u' of type uuid | expected a UUID
          fx = X'0001'               | Invalid literal X'0001' for column 'fx' of type fixed[4] | exactly 4 bytes
          bin = 'zz'                 | Invalid literal 'zz' for column 'bin' of type binary     | hex string
          i = 'five'                 | Invalid literal 'five' for column 'i' of type int        | expected a number
          s = 5                      | Invalid literal 5 for column 's' of type string          | expected a quoted string
          b = 1                      | Invalid literal 1 for column 'b' of type boolean         | expected true or false
          d = true                   | Invalid literal true for column 'd' of type double       | expected a number
          i is nan                   | 'is nan' applies to float and double columns             | 'i' is int
          i starts with 'a'          | 'starts with' applies to string columns                  | 'i' is int
          addr = 'Oslo'              | column 'addr' is a struct                                | e.g. addr.city
          nope = 1                   | unknown column 'nope'                                    | addr.city
          """)
  void badFiltersNameTheColumnItsTypeAndTheValue(String filter, String names, String expects) {
    assertThatThrownBy(() -> bind(filter))
        .isInstanceOf(InvalidFilterException.class)
        .isInstanceOf(InvalidSpecException.class)
        .hasMessageContaining(names)
        .hasMessageContaining(expects)
        .hasMessageContaining("\"" + filter + "\"");
  }

  @Test
  void icebergJsonExpressionsAreTypedAndNegatedLikeTheTextSyntax() {
    String json =
        ExpressionParser.toJson(
            Expressions.not(
                Expressions.or(
                    Expressions.greaterThan("d", 0.5), Expressions.equal("day", "2024-05-01"))));

    Expression typed = bind(json);

    assertThat(typed.toString())
        .isEqualTo(bind("(d <= 0.5 or d is nan) and day != '2024-05-01'").toString());
  }

  @Test
  void icebergJsonWithTransformsIsLeftToIcebergToBind() {
    String json =
        "{\"type\": \"eq\", \"term\": {\"type\": \"transform\", \"transform\": \"bucket[4]\","
            + " \"term\": \"l\"}, \"value\": 1}";

    assertThat(bind(json).toString()).contains("bucket[4](ref(name=\"l\")) == 1");
  }

  private static String transformed(String op, String transform, String column, String value) {
    return "{\"type\": \""
        + op
        + "\", \"term\": {\"type\": \"transform\", \"transform\": \""
        + transform
        + "\", \"term\": \""
        + column
        + "\"}, \"value\": "
        + value
        + "}";
  }

  /**
   * What Iceberg's binder throws for a transform term it cannot bind (an unknown transform, a
   * literal its result cannot hold, a decimal that is no number) is the filter's fault, refused as
   * an invalid filter like every other; and a transform of a field inside a list or map is refused
   * as the field itself is, where the row check would otherwise fail on every slice.
   */
  @ParameterizedTest(name = "{0}({1}) = {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          truncate[-1] | s            | '"a"' | Cannot bind unsupported transform: truncate[-1]
          day          | ts           | '"x"' | Text 'x' could not be parsed
          truncate[2]  | dec          | '"x"' | Character x is neither a decimal digit
          bucket[4]    | nums.element | 1     | column 'nums.element' is inside list 'nums'
          identity     | tags.key     | '"a"' | column 'tags.key' is inside map 'tags'
          """)
  void transformTermsThatCannotBindAreInvalidFilters(
      String transform, String column, String value, String named) {
    String json = transformed("eq", transform, column, value);
    assertThatThrownBy(
            () ->
                FilterBinding.bound(
                    FilterBinding.bind(RowFilters.parse(json), NESTED, json), NESTED, json))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("Invalid filter")
        .hasMessageContaining(named);
  }

  private static final org.apache.iceberg.Schema NESTED =
      TypeUtil.join(
          SqlFilterSemanticsTest.SCHEMA,
          new org.apache.iceberg.Schema(
              Types.NestedField.optional(
                  101, "nums", Types.ListType.ofOptional(102, Types.LongType.get())),
              Types.NestedField.optional(
                  103,
                  "tags",
                  Types.MapType.ofOptional(
                      104, 105, Types.StringType.get(), Types.StringType.get()))));

  @Test
  void malformedJsonSaysSo() {
    assertThatThrownBy(() -> bind("{\"type\": \"eq\", \"term\": \"i\"}"))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("not an Iceberg expression in JSON form");
  }

  @Test
  void pyIcebergStringFormsReadAsTheyDoInPyIceberg() {
    assertThat(bind("\"i\" == 1").toString()).isEqualTo(bind("i = 1").toString());
    assertThat(bind("s like 'ab%'").toString()).isEqualTo(bind("s starts with 'ab'").toString());
    assertThat(bind("s not like 'ab%'").toString())
        .isEqualTo(bind("s not starts with 'ab'").toString());
    assertThat(bind("s like 'a\\%'").toString()).isEqualTo(bind("s = 'a%'").toString());
    assertThat(bind("1 < i").toString()).isEqualTo(bind("i > 1").toString());
    assertThat(bind("TRUE")).isEqualTo(Expressions.alwaysTrue());
  }
}
