package io.floe.filter;

import io.floe.spec.InvalidSpecException;
import io.floe.util.Excerpt;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionParser;
import org.apache.iceberg.expressions.Expressions;

/**
 * The two ways a dataset's row filter is written: Floe's filter syntax ({@link RowFilterParser},
 * which also reads PyIceberg's string forms), or an Iceberg expression in its JSON form (Iceberg's
 * {@link ExpressionParser}, the REST catalog's wire form), told apart by a leading <code>{</code>,
 * which the filter syntax never starts with.
 */
public final class RowFilters {
  private RowFilters() {}

  /**
   * Parses a filter in either form, with chains of one operator regrouped as balanced trees; null
   * or blank matches every row.
   *
   * @throws InvalidSpecException (a {@link RowFilterSyntaxException} or an {@link
   *     InvalidFilterException}) for a filter that is malformed or larger than {@link FilterLimits}
   *     allows
   */
  public static Expression parse(String filter) {
    if (filter == null || filter.isBlank()) {
      return Expressions.alwaysTrue();
    }
    return FilterLimits.bounded(
        isJson(filter) ? fromJson(filter) : RowFilterParser.parse(filter), filter);
  }

  private static Expression fromJson(String filter) {
    try {
      return ExpressionParser.fromJson(filter.trim());
    } catch (RuntimeException e) {
      // Iceberg's message may quote the JSON: bounded like the filter itself.
      throw new InvalidFilterException(
          String.format(
              "Invalid filter: not an Iceberg expression in JSON form (%s): %s",
              Excerpt.of(e.getMessage()), Excerpt.of(filter)));
    }
  }

  public static boolean isJson(String filter) {
    return filter != null && filter.trim().startsWith("{");
  }
}
