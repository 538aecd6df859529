package io.floe.filter;

import java.util.Comparator;
import java.util.Set;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.expressions.And;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.BoundPredicate;
import org.apache.iceberg.expressions.BoundTerm;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Not;
import org.apache.iceberg.expressions.Or;
import org.apache.iceberg.types.Types;

/**
 * Decides whether one row satisfies a filter, with SQL's three-valued logic: a comparison with a
 * null is unknown, NaN satisfies no comparison but {@code !=} (and {@code not in}), {@code not}
 * leaves unknown unknown, and a row is kept only when the filter is true. This is what PyIceberg,
 * Spark and Trino serve for a filter, unlike Iceberg's own row evaluator, which orders nulls and
 * NaN as extreme values and so lets {@code x < 0} or {@code x != 0} keep null rows.
 *
 * <p>Rows are Iceberg generic records (or any {@link StructLike}) of {@code struct}, holding Java
 * time values; they are viewed in Iceberg's internal representation (days, micros) to compare with
 * the bound literals. Not thread-safe: one instance per reading thread.
 */
public final class RowPredicate {
  private final Node root;
  private final InternalRecordWrapper internal;

  /**
   * @param filter a typed filter from {@link FilterBinding}, or Iceberg JSON parsed with a schema
   */
  public RowPredicate(Types.StructType struct, Expression filter) {
    this.internal = new InternalRecordWrapper(struct);
    this.root = compile(Binder.bind(struct, filter, true));
  }

  public boolean test(StructLike row) {
    return root.eval(internal.wrap(row)) == Boolean.TRUE;
  }

  /** A compiled part of the filter: TRUE, FALSE, or null for unknown. */
  @FunctionalInterface
  private interface Node {
    Boolean eval(StructLike row);
  }

  private static Node compile(Expression expr) {
    switch (expr.op()) {
      case TRUE:
        return row -> Boolean.TRUE;
      case FALSE:
        return row -> Boolean.FALSE;
      case NOT:
        Node child = compile(((Not) expr).child());
        return row -> {
          Boolean value = child.eval(row);
          return value == null ? null : !value;
        };
      case AND:
        Node andLeft = compile(((And) expr).left());
        Node andRight = compile(((And) expr).right());
        return row -> {
          Boolean left = andLeft.eval(row);
          if (left == Boolean.FALSE) {
            return Boolean.FALSE;
          }
          Boolean right = andRight.eval(row);
          if (right == Boolean.FALSE) {
            return Boolean.FALSE;
          }
          return left == null || right == null ? null : Boolean.TRUE;
        };
      case OR:
        Node orLeft = compile(((Or) expr).left());
        Node orRight = compile(((Or) expr).right());
        return row -> {
          Boolean left = orLeft.eval(row);
          if (left == Boolean.TRUE) {
            return Boolean.TRUE;
          }
          Boolean right = orRight.eval(row);
          if (right == Boolean.TRUE) {
            return Boolean.TRUE;
          }
          return left == null || right == null ? null : Boolean.FALSE;
        };
      default:
        return predicate((BoundPredicate<?>) expr);
    }
  }

  @SuppressWarnings("unchecked")
  private static Node predicate(BoundPredicate<?> predicate) {
    BoundTerm<Object> term = (BoundTerm<Object>) predicate.term();
    switch (predicate.op()) {
      case IS_NULL:
        return row -> term.eval(row) == null;
      case NOT_NULL:
        return row -> term.eval(row) != null;
      case IS_NAN:
        return row -> {
          Object value = term.eval(row);
          return value == null ? null : isNaN(value);
        };
      case NOT_NAN:
        return row -> {
          Object value = term.eval(row);
          return value == null ? null : !isNaN(value);
        };
      case IN:
      case NOT_IN:
        return membership(predicate, term);
      default:
        return comparison(predicate, term);
    }
  }

  @SuppressWarnings("unchecked")
  private static Node membership(BoundPredicate<?> predicate, BoundTerm<Object> term) {
    Set<Object> values = (Set<Object>) predicate.asSetPredicate().literalSet();
    boolean in = predicate.op() == Expression.Operation.IN;
    return row -> {
      Object value = term.eval(row);
      if (value == null) {
        return null;
      }
      if (isNaN(value)) {
        return !in;
      }
      return values.contains(positiveZero(value)) == in;
    };
  }

  @SuppressWarnings("unchecked")
  private static Node comparison(BoundPredicate<?> predicate, BoundTerm<Object> term) {
    Object literal = predicate.asLiteralPredicate().literal().value();
    Comparator<Object> order =
        (Comparator<Object>) predicate.asLiteralPredicate().literal().comparator();
    Expression.Operation op = predicate.op();
    if (literal instanceof Float || literal instanceof Double) {
      double bound = ((Number) literal).doubleValue();
      return row -> {
        Object value = term.eval(row);
        return value == null ? null : ieee(op, ((Number) value).doubleValue(), bound);
      };
    }
    return row -> {
      Object value = term.eval(row);
      if (value == null) {
        return null;
      }
      switch (op) {
        case STARTS_WITH:
          return value.toString().startsWith(literal.toString());
        case NOT_STARTS_WITH:
          return !value.toString().startsWith(literal.toString());
        default:
          return holds(op, order.compare(value, literal));
      }
    };
  }

  /** IEEE 754 comparison, as SQL engines do: NaN is unequal to all and in no order. */
  private static boolean ieee(Expression.Operation op, double value, double bound) {
    return switch (op) {
      case LT -> value < bound;
      case LT_EQ -> value <= bound;
      case GT -> value > bound;
      case GT_EQ -> value >= bound;
      case EQ -> value == bound;
      case NOT_EQ -> value != bound;
      default -> throw new IllegalStateException("Not a comparison: " + op);
    };
  }

  private static boolean holds(Expression.Operation op, int comparison) {
    return switch (op) {
      case LT -> comparison < 0;
      case LT_EQ -> comparison <= 0;
      case GT -> comparison > 0;
      case GT_EQ -> comparison >= 0;
      case EQ -> comparison == 0;
      case NOT_EQ -> comparison != 0;
      default -> throw new IllegalStateException("Not a comparison: " + op);
    };
  }

  private static boolean isNaN(Object value) {
    return (value instanceof Double d && d.isNaN()) || (value instanceof Float f && f.isNaN());
  }

  /** -0.0 equals 0.0 in SQL; the literal set holds the literal's zero, which is 0.0. */
  private static Object positiveZero(Object value) {
    if (value instanceof Double d && d == 0.0d) {
      return 0.0d;
    } else if (value instanceof Float f && f == 0.0f) {
      return 0.0f;
    }
    return value;
  }
}
