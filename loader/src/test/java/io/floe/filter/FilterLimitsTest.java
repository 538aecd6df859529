package io.floe.filter;

import static org.apache.iceberg.types.Types.NestedField.optional;
import static org.apache.iceberg.types.Types.NestedField.required;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.util.Excerpt;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.And;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Not;
import org.apache.iceberg.expressions.Or;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * Long chains of {@code and} and {@code or} are served as written, in either form, up to {@link
 * FilterLimits#MAX_TERMS}; past it, or nested past {@link FilterLimits#MAX_LEVELS}, a filter is
 * refused as the caller's mistake with a short message, never by the stack or by Jackson's nesting
 * limit on the way to the slices.
 */
class FilterLimitsTest {
  private static final Schema SCHEMA =
      new Schema(
          required(1, "id", Types.IntegerType.get()), optional(2, "score", Types.DoubleType.get()));

  private static final List<Record> ROWS =
      IntStream.range(0, 2_000).mapToObj(FilterLimitsTest::row).toList();

  /** {@code id != 0 and id != 2 and ...}: every odd id below 2 * terms and every id above. */
  private static String chainOfAnds(int terms) {
    return IntStream.range(0, terms)
        .mapToObj(i -> "id != " + (2 * i))
        .collect(Collectors.joining(" and "));
  }

  @Test
  void aThousandChainedAndTermsAreServedAsWritten() {
    String filter = chainOfAnds(1_000);

    Expression planned = planned(filter);

    assertThat(depth(planned)).isLessThanOrEqualTo(11);
    assertThat(matchingIds(planned))
        .hasSize(1_000)
        .allSatisfy(id -> assertThat(id % 2).isEqualTo(1));
  }

  @Test
  void chainsOfOrAndMixedChainsKeepTheirMeaning() {
    String ors =
        IntStream.range(0, 1_000)
            .mapToObj(i -> "id = " + (3 * i))
            .collect(Collectors.joining(" or "));
    assertThat(matchingIds(planned(ors)))
        .hasSize(667)
        .allSatisfy(id -> assertThat(id % 3).isZero());

    String mixed =
        "("
            + ors
            + ") and not ("
            + chainOfAnds(20).replace("!=", "=").replace(" and ", " or ")
            + ")";
    assertThat(matchingIds(planned(mixed)))
        .hasSize(667 - 7)
        .allSatisfy(id -> assertThat(id % 3 == 0 && !(id % 2 == 0 && id < 40)).isTrue());
  }

  @Test
  void aLeftDeepIcebergJsonChainIsRegroupedToo() {
    Expression chain = Expressions.notEqual("id", 0);
    for (int i = 1; i < 900; i++) {
      chain = Expressions.and(chain, Expressions.notEqual("id", 2 * i));
    }
    String json = ExpressionParser.toJson(chain);

    Expression planned = planned(json);

    assertThat(depth(planned)).isLessThanOrEqualTo(11);
    assertThat(matchingIds(planned)).hasSize(1_100);
  }

  @Test
  void twentyThousandChainedTermsAreRefusedWithAShortMessage() {
    String filter = chainOfAnds(20_000);

    assertThatThrownBy(() -> RowFilters.parse(filter))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("more than " + FilterLimits.MAX_TERMS + " terms")
        .hasMessageContaining("(" + filter.length() + " characters)")
        .satisfies(
            e ->
                assertThat(e.getMessage().length())
                    .isLessThanOrEqualTo(Excerpt.MAX_DESCRIPTION_CHARS));
  }

  @Test
  void theTermLimitIsExact() {
    assertThat(matchingIds(planned(chainOfAnds(FilterLimits.MAX_TERMS)))).isNotEmpty();
    assertThatThrownBy(() -> RowFilters.parse(chainOfAnds(FilterLimits.MAX_TERMS + 1)))
        .isInstanceOf(InvalidFilterException.class);
    // A between is two comparisons.
    String betweens =
        IntStream.range(0, FilterLimits.MAX_TERMS / 2 + 1)
            .mapToObj(i -> "id between 0 and 5000")
            .collect(Collectors.joining(" and "));
    assertThatThrownBy(() -> RowFilters.parse(betweens)).isInstanceOf(InvalidFilterException.class);
  }

  @Test
  void operatorsNestedPastTheLevelLimitAreRefused() {
    Expression nested = Expressions.equal("id", 1);
    for (int level = 0; level < FilterLimits.MAX_LEVELS; level++) {
      nested =
          level % 2 == 0
              ? Expressions.or(Expressions.equal("id", level), nested)
              : Expressions.and(Expressions.notNull("id"), nested);
    }
    assertThat(matchingIds(planned(ExpressionParser.toJson(nested)))).isNotEmpty();

    String deeper = ExpressionParser.toJson(Expressions.not(nested));
    assertThatThrownBy(() -> RowFilters.parse(deeper))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("more than " + FilterLimits.MAX_LEVELS + " levels");
  }

  /**
   * The filter as planning leaves it: parsed, typed, bound, and through the Iceberg JSON the slices
   * read it back from.
   */
  private static Expression planned(String filter) {
    Expression typed = FilterBinding.bind(RowFilters.parse(filter), SCHEMA, filter);
    Expression bound = FilterBinding.bound(typed, SCHEMA, filter);
    return ExpressionParser.fromJson(ExpressionParser.toJson(bound), SCHEMA);
  }

  private static List<Integer> matchingIds(Expression planned) {
    RowPredicate predicate = new RowPredicate(SCHEMA.asStruct(), planned);
    return ROWS.stream().filter(predicate::test).map(row -> (Integer) row.getField("id")).toList();
  }

  private static int depth(Expression expr) {
    if (expr instanceof And and) {
      return 1 + Math.max(depth(and.left()), depth(and.right()));
    } else if (expr instanceof Or or) {
      return 1 + Math.max(depth(or.left()), depth(or.right()));
    } else if (expr instanceof Not not) {
      return 1 + depth(not.child());
    }
    return 0;
  }

  private static Record row(int id) {
    Record record = GenericRecord.create(SCHEMA);
    record.setField("id", id);
    record.setField("score", id / 10.0);
    return record;
  }
}
