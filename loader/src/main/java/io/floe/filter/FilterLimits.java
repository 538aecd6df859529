package io.floe.filter;

import io.floe.util.Excerpt;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.apache.iceberg.expressions.And;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expression.Operation;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Not;
import org.apache.iceberg.expressions.Or;

/**
 * The size a parsed filter may have, and the regrouping that keeps its tree shallow. Every step
 * after parsing walks a filter recursively (binding, Iceberg's pruning evaluators, the row check)
 * and writes it as Iceberg JSON for the slices, which Jackson refuses past 1,000 levels of nesting;
 * a chain of {@code and} parses into a tree as deep as it is long. So a chain of one operator is
 * regrouped into a balanced tree (the same filter: {@code and} and {@code or} are associative in
 * SQL's three-valued logic too), and a filter with more than {@link #MAX_TERMS} terms or more than
 * {@link #MAX_LEVELS} levels of operators is refused, which keeps the tree within a few hundred
 * levels and the work per row bounded.
 */
public final class FilterLimits {
  /** Comparisons and tests a filter may have (a {@code between} is two, an {@code in} one). */
  public static final int MAX_TERMS = 1_024;

  /**
   * Levels of {@code and}, {@code or} and {@code not} a filter may nest, a chain of one operator
   * counting as one; the filter syntax's parentheses already stop at 100.
   */
  public static final int MAX_LEVELS = 128;

  private final String filterText;
  private int terms = 0;

  private FilterLimits(String filterText) {
    this.filterText = filterText;
  }

  /**
   * {@code filter} with every chain of one operator as a balanced tree, in the order written.
   *
   * @param filterText the filter as the user wrote it, quoted in the error
   * @throws InvalidFilterException when it has more terms or levels than allowed
   */
  static Expression bounded(Expression filter, String filterText) {
    return new FilterLimits(filterText).regrouped(filter, 0);
  }

  /** Recursion follows only changes of operator, so it stops at {@link #MAX_LEVELS}. */
  private Expression regrouped(Expression expr, int level) {
    Operation op = expr.op();
    if (op != Operation.AND && op != Operation.OR && op != Operation.NOT) {
      terms += 1;
      if (terms > MAX_TERMS) {
        throw refused(
            String.format(
                "more than %d terms (comparisons and tests; list values with 'in' instead)",
                MAX_TERMS));
      }
      return expr;
    }
    if (level + 1 > MAX_LEVELS) {
      throw refused(
          String.format(
              "more than %d levels of 'and', 'or' and 'not' nested in each other", MAX_LEVELS));
    }
    if (op == Operation.NOT) {
      return Expressions.not(regrouped(((Not) expr).child(), level + 1));
    }
    List<Expression> operands = new ArrayList<>();
    for (Expression operand : chain(expr)) {
      operands.add(regrouped(operand, level + 1));
    }
    return balanced(op, operands);
  }

  /** The operands of a chain of {@code chain}'s operator, left to right, without recursion. */
  private static List<Expression> chain(Expression chain) {
    List<Expression> operands = new ArrayList<>();
    Deque<Expression> pending = new ArrayDeque<>();
    pending.push(chain);
    while (!pending.isEmpty()) {
      Expression next = pending.pop();
      if (next.op() == chain.op()) {
        pending.push(right(next));
        pending.push(left(next));
      } else {
        operands.add(next);
      }
    }
    return operands;
  }

  /** Pairs neighbours level by level, so a chain of n operands is about log2(n) deep. */
  private static Expression balanced(Operation op, List<Expression> operands) {
    List<Expression> level = operands;
    while (level.size() > 1) {
      List<Expression> paired = new ArrayList<>((level.size() + 1) / 2);
      for (int i = 0; i + 1 < level.size(); i += 2) {
        paired.add(
            op == Operation.AND
                ? Expressions.and(level.get(i), level.get(i + 1))
                : Expressions.or(level.get(i), level.get(i + 1)));
      }
      if (level.size() % 2 == 1) {
        paired.add(level.get(level.size() - 1));
      }
      level = paired;
    }
    return level.get(0);
  }

  private static Expression left(Expression expr) {
    return expr instanceof And and ? and.left() : ((Or) expr).left();
  }

  private static Expression right(Expression expr) {
    return expr instanceof And and ? and.right() : ((Or) expr).right();
  }

  private InvalidFilterException refused(String why) {
    return new InvalidFilterException(
        String.format("Invalid filter \"%s\": %s", Excerpt.of(filterText), why));
  }
}
