package io.floe.filter;

import io.floe.util.Excerpt;
import java.time.DateTimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.iceberg.Schema;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.And;
import org.apache.iceberg.expressions.Binder;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expression.Operation;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.expressions.NamedReference;
import org.apache.iceberg.expressions.Not;
import org.apache.iceberg.expressions.Or;
import org.apache.iceberg.expressions.UnboundPredicate;
import org.apache.iceberg.expressions.UnboundTransform;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

/**
 * Checks a parsed row filter against a table schema and rewrites it into the form Floe plans and
 * evaluates with: every literal converted to its column's type ({@link ColumnLiterals}), and every
 * {@code not} pushed down to the predicates, so the result is a tree of {@code and}, {@code or} and
 * predicates only.
 *
 * <p>The rewrite keeps SQL's meaning (the one PyIceberg, Spark and Trino give a filter): a null
 * never satisfies a comparison, and negation does not make it satisfy one; NaN satisfies no
 * comparison but {@code !=}. So {@code not (x > 1)} on a double column becomes {@code x <= 1 or x
 * is nan}, not Iceberg's plain {@code x <= 1}. Because every predicate left is one whose matching
 * rows Iceberg's file and row-group pruning keeps, pruning never removes a row the filter selects,
 * and the rows served do not depend on how they fall into files.
 */
public final class FilterBinding {
  private final Schema schema;

  /** The filter as messages quote it. */
  private final String filterText;

  private FilterBinding(Schema schema, String filterText) {
    this.schema = schema;
    this.filterText = Excerpt.of(filterText);
  }

  /**
   * The filter, typed against {@code schema} and in negation normal form; still unbound.
   *
   * @param filterText the filter as the user wrote it, quoted in error messages
   * @throws InvalidFilterException naming the column, its type and the literal that do not fit
   */
  public static Expression bind(Expression filter, Schema schema, String filterText) {
    return new FilterBinding(schema, filterText).rewrite(filter, false);
  }

  /**
   * The typed filter bound to {@code schema}'s field ids, as slices evaluate it.
   *
   * @throws InvalidFilterException when Iceberg cannot bind it: a transform term from an Iceberg
   *     JSON expression that does not fit its column, is not one Iceberg knows ({@code
   *     truncate[-1]}), or compares with a literal the transform's result cannot hold. Binding
   *     depends on nothing but the caller's filter and the table's schema, so whatever Iceberg's
   *     binder throws for it is the filter's fault, not the node's.
   */
  public static Expression bound(Expression typed, Schema schema, String filterText) {
    try {
      return Binder.bind(schema.asStruct(), typed, true);
    } catch (ValidationException
        | IllegalArgumentException
        | UnsupportedOperationException
        | DateTimeException
        | ArithmeticException e) {
      throw new InvalidFilterException(
          String.format(
              "Invalid filter \"%s\": %s", Excerpt.of(filterText), Excerpt.of(e.getMessage())));
    }
  }

  /**
   * A weaker form of a bound filter for Iceberg's file and row-group pruning: predicates on UUID
   * columns become true. Iceberg 1.11 orders UUIDs as Java does (signed), while Parquet's
   * statistics order them as unsigned bytes, so pruning with them drops files that hold matches.
   * Replacing a predicate by true in a filter without {@code not} only admits more rows; the row
   * check then applies the whole filter.
   */
  public static Expression forPruning(Expression typed, Schema schema) {
    switch (typed.op()) {
      case AND:
        And and = (And) typed;
        return Expressions.and(forPruning(and.left(), schema), forPruning(and.right(), schema));
      case OR:
        Or or = (Or) typed;
        return Expressions.or(forPruning(or.left(), schema), forPruning(or.right(), schema));
      default:
        if (typed instanceof UnboundPredicate<?> predicate) {
          // A transform of a UUID column (identity keeps its order) is pruned by its statistics
          // too.
          NamedReference<?> reference =
              predicate.term() instanceof UnboundTransform<?, ?> transform
                  ? transform.ref()
                  : predicate.term() instanceof NamedReference<?> named ? named : null;
          Types.NestedField field = reference == null ? null : schema.findField(reference.name());
          if (field != null && field.type().typeId() == Type.TypeID.UUID) {
            return Expressions.alwaysTrue();
          }
        }
        return typed;
    }
  }

  private Expression rewrite(Expression expr, boolean negate) {
    switch (expr.op()) {
      case TRUE:
        return negate ? Expressions.alwaysFalse() : Expressions.alwaysTrue();
      case FALSE:
        return negate ? Expressions.alwaysTrue() : Expressions.alwaysFalse();
      case NOT:
        return rewrite(((Not) expr).child(), !negate);
      case AND:
        And and = (And) expr;
        return negate
            ? Expressions.or(rewrite(and.left(), true), rewrite(and.right(), true))
            : Expressions.and(rewrite(and.left(), false), rewrite(and.right(), false));
      case OR:
        Or or = (Or) expr;
        return negate
            ? Expressions.and(rewrite(or.left(), true), rewrite(or.right(), true))
            : Expressions.or(rewrite(or.left(), false), rewrite(or.right(), false));
      default:
        if (expr instanceof UnboundPredicate<?> predicate) {
          return predicate(predicate, negate);
        }
        throw new InvalidFilterException(
            String.format(
                "Invalid filter \"%s\": %s is already bound", filterText, Excerpt.of(expr)));
    }
  }

  private Expression predicate(UnboundPredicate<?> predicate, boolean negate) {
    if (!(predicate.term() instanceof NamedReference<?> reference)) {
      // A transform term (from an Iceberg JSON expression): Iceberg binds its literals itself
      // ({@link #bound}), but its column must be one a filter may name, as for any other term.
      if (predicate.term() instanceof UnboundTransform<?, ?> transform) {
        filterable(transform.ref().name());
      }
      return negate ? predicate.negate() : predicate;
    }
    String column = reference.name();
    Type type = filterable(column).type();
    Operation op = predicate.op();
    switch (op) {
      case IS_NULL:
      case NOT_NULL:
        return Expressions.predicate(negate ? op.negate() : op, column);
      case IS_NAN:
      case NOT_NAN:
        requireFloating(column, type, op);
        return Expressions.predicate(negate ? op.negate() : op, column);
      case STARTS_WITH:
      case NOT_STARTS_WITH:
        requireString(column, type, op);
        Literal<?> prefix = literals(column, type).exact(value(predicate.literal()));
        return Expressions.predicate(negate ? op.negate() : op, column, List.of(prefix));
      case IN:
      case NOT_IN:
        requirePrimitive(column, type);
        List<Object> values = new ArrayList<>();
        predicate.literals().forEach(literal -> values.add(value(literal)));
        return literals(column, type).set(negate ? op.negate() : op, values);
      case LT:
      case LT_EQ:
      case GT:
      case GT_EQ:
      case EQ:
      case NOT_EQ:
        requirePrimitive(column, type);
        ColumnLiterals literals = literals(column, type);
        Object value = value(predicate.literal());
        if (!negate) {
          return literals.compare(op, value);
        }
        Expression negated = literals.compare(op.negate(), value);
        // NaN fails x < c and also x >= c: a negated range test must let it through again.
        boolean range = op != Operation.EQ && op != Operation.NOT_EQ;
        return range && isFloating(type)
            ? Expressions.or(negated, Expressions.isNaN(column))
            : negated;
      default:
        throw new InvalidFilterException(
            String.format(
                "Invalid filter \"%s\": unsupported operation %s on column '%s'",
                filterText, op, Excerpt.of(column)));
    }
  }

  /**
   * The list or map that {@code field} sits in (as "list 'a.b'"), or null: Iceberg binds filters to
   * fields reached through structs only, one value per row.
   */
  /**
   * The column a term names, if a filter may name it: a top-level column or a field of structs, not
   * one inside a list or map (the row check reads one value per row, and Iceberg's accessors reach
   * no element of a list or map).
   */
  private Types.NestedField filterable(String column) {
    Types.NestedField field = schema.findField(column);
    if (field == null) {
      throw new InvalidFilterException(
          String.format(
              "Invalid filter \"%s\": unknown column '%s'; the table has: %s",
              filterText, Excerpt.of(column), columnNames()));
    }
    String container = container(field);
    if (container != null) {
      throw new InvalidFilterException(
          String.format(
              "Invalid filter \"%s\": column '%s' is inside %s; filters apply to top-level"
                  + " columns and the fields of structs",
              filterText, Excerpt.of(column), container));
    }
    return field;
  }

  private String container(Types.NestedField field) {
    Map<Integer, Integer> parents = TypeUtil.indexParents(schema.asStruct());
    for (Integer id = parents.get(field.fieldId()); id != null; id = parents.get(id)) {
      Type parent = schema.findType(id);
      if (parent.isListType() || parent.isMapType()) {
        return (parent.isListType() ? "list '" : "map '") + schema.findColumnName(id) + "'";
      }
    }
    return null;
  }

  private ColumnLiterals literals(String column, Type type) {
    return new ColumnLiterals(column, type.asPrimitiveType(), filterText);
  }

  private static Object value(Literal<?> literal) {
    return literal.value();
  }

  private static boolean isFloating(Type type) {
    return type.typeId() == Type.TypeID.FLOAT || type.typeId() == Type.TypeID.DOUBLE;
  }

  private void requireFloating(String column, Type type, Operation op) {
    if (!isFloating(type)) {
      throw new InvalidFilterException(
          String.format(
              "Invalid filter \"%s\": %s applies to float and double columns, but '%s' is %s",
              filterText, describe(op), Excerpt.of(column), type));
    }
  }

  private void requireString(String column, Type type, Operation op) {
    if (type.typeId() != Type.TypeID.STRING) {
      throw new InvalidFilterException(
          String.format(
              "Invalid filter \"%s\": %s applies to string columns, but '%s' is %s",
              filterText, describe(op), Excerpt.of(column), type));
    }
  }

  private void requirePrimitive(String column, Type type) {
    if (!type.isPrimitiveType()) {
      throw new InvalidFilterException(
          String.format(
              "Invalid filter \"%s\": column '%s' is a %s, which cannot be compared with a value;"
                  + " compare one of its fields%s",
              filterText,
              Excerpt.of(column),
              type.typeId().toString().toLowerCase(java.util.Locale.ROOT),
              type.isStructType() && !type.asStructType().fields().isEmpty()
                  ? ", e.g. "
                      + Excerpt.of(column + "." + type.asStructType().fields().get(0).name())
                  : ""));
    }
  }

  private static String describe(Operation op) {
    return switch (op) {
      case IS_NAN -> "'is nan'";
      case NOT_NAN -> "'is not nan'";
      case STARTS_WITH -> "'starts with'";
      case NOT_STARTS_WITH -> "'not starts with'";
      default -> op.toString();
    };
  }

  /** Every column path of the schema, nested ones dotted, for "unknown column" messages. */
  private String columnNames() {
    Map<String, Integer> byName = TypeUtil.indexByName(schema.asStruct());
    return String.join(", ", new TreeSet<>(byName.keySet()));
  }
}
