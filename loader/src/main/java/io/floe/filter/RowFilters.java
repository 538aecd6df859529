package io.floe.filter;

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

  /** Parses a filter in either form; null or blank matches every row. */
  public static Expression parse(String filter) {
    if (filter == null || filter.isBlank()) {
      return Expressions.alwaysTrue();
    }
    if (isJson(filter)) {
      try {
        return ExpressionParser.fromJson(filter.trim());
      } catch (RuntimeException e) {
        throw new InvalidFilterException(
            String.format(
                "Invalid filter: not an Iceberg expression in JSON form (%s): %s",
                e.getMessage(), filter));
      }
    }
    return RowFilterParser.parse(filter);
  }

  public static boolean isJson(String filter) {
    return filter != null && filter.trim().startsWith("{");
  }
}
