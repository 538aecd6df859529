package io.floe.filter;

import io.floe.util.Excerpt;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.relocated.com.google.common.collect.Sets;

/**
 * Turns a row filter written in the syntax of {@code docs/filter-syntax.md} into an unbound Iceberg
 * {@link Expression}, for example {@code rating >= 4 and genre in ('jazz', 'blues')}.
 *
 * <p>The result is not bound to a schema: column names and the conversion of literals to column
 * types (such as {@code '2024-01-01'} to a date) are checked when Iceberg binds the expression.
 */
public final class RowFilterParser {
  /**
   * Parentheses and {@code not} recurse; the cap turns a hostile filter into a syntax error instead
   * of a StackOverflowError.
   */
  static final int MAX_NESTING = 100;

  private static final Set<Token.Kind> COMPARISONS =
      Sets.immutableEnumSet(
          Token.Kind.EQ,
          Token.Kind.NOT_EQ,
          Token.Kind.LT,
          Token.Kind.LT_EQ,
          Token.Kind.GT,
          Token.Kind.GT_EQ);

  private static final Set<Token.Kind> VALUES =
      Sets.immutableEnumSet(
          Token.Kind.NUMBER,
          Token.Kind.STRING,
          Token.Kind.BINARY,
          Token.Kind.TRUE,
          Token.Kind.FALSE);

  private static final Set<Token.Kind> PREDICATE_OPERATORS =
      Sets.immutableEnumSet(
          Token.Kind.EQ,
          Token.Kind.NOT_EQ,
          Token.Kind.LT,
          Token.Kind.LT_EQ,
          Token.Kind.GT,
          Token.Kind.GT_EQ,
          Token.Kind.IN,
          Token.Kind.STARTS,
          Token.Kind.LIKE,
          Token.Kind.BETWEEN,
          Token.Kind.IS,
          Token.Kind.NOT);

  private RowFilterParser() {}

  /**
   * Parses {@code text}; a null or blank filter matches every row.
   *
   * @throws RowFilterSyntaxException if the text does not follow the syntax
   */
  public static Expression parse(String text) {
    if (text == null || text.isBlank()) {
      return Expressions.alwaysTrue();
    }
    return new Parser(text).filter();
  }

  /** Recursive descent over the grammar; one instance per parse, as it tracks the position. */
  private static final class Parser {
    private final String text;
    private final RowFilterLexer lexer;
    private Token current;
    private Token previous = null;
    private int depth = 0;

    Parser(String text) {
      this.text = text;
      this.lexer = new RowFilterLexer(text);
      this.current = lexer.next();
    }

    // filter = or-expr END
    Expression filter() {
      Expression expr = orExpression();
      if (current.kind() == Token.Kind.RIGHT_PAREN) {
        throw error(current, "unmatched ')', expected 'and', 'or' or end of input" + after());
      } else if (current.kind() != Token.Kind.END) {
        throw expected("'and', 'or' or end of input" + after());
      }
      return expr;
    }

    // or-expr = and-expr { "or" and-expr }
    private Expression orExpression() {
      Expression expr = andExpression();
      while (accept(Token.Kind.OR)) {
        expr = Expressions.or(expr, andExpression());
      }
      return expr;
    }

    // and-expr = not-expr { "and" not-expr }
    private Expression andExpression() {
      Expression expr = notExpression();
      while (accept(Token.Kind.AND)) {
        expr = Expressions.and(expr, notExpression());
      }
      return expr;
    }

    // not-expr = "not" not-expr | "(" or-expr ")" | predicate
    private Expression notExpression() {
      if (current.kind() == Token.Kind.NOT) {
        Token not = advance();
        nest(not);
        Expression expr = Expressions.not(notExpression());
        depth -= 1;
        return expr;
      } else if (current.kind() == Token.Kind.LEFT_PAREN) {
        Token open = advance();
        nest(open);
        Expression expr = orExpression();
        expect(
            Token.Kind.RIGHT_PAREN,
            "')'" + after() + " to close the '(' at position " + open.position());
        depth -= 1;
        return expr;
      } else if (current.kind() == Token.Kind.NAME) {
        return predicate(advance());
      } else if (VALUES.contains(current.kind())) {
        return valueFirst();
      } else if (current.kind().isKeyword()
          && current.kind() != Token.Kind.AND
          && current.kind() != Token.Kind.OR) {
        // Likely a column that happens to share a keyword's name, e.g. "in" or "nan".
        throw error(
            current,
            "expected a column name, 'not' or '('"
                + after()
                + " but found "
                + current.describe()
                + " (write `"
                + current.text()
                + "` for a column of that name)");
      }
      throw expected("a column name, 'not' or '('" + after());
    }

    /**
     * A comparison written value first, as PyIceberg accepts ({@code 5 < x} is {@code x > 5}), or a
     * bare {@code true} or {@code false}.
     */
    private Expression valueFirst() {
      Token first = current;
      Object value = value();
      Token.Kind operator = current.kind();
      if (COMPARISONS.contains(operator)) {
        advance();
        if (current.kind() != Token.Kind.NAME) {
          throw expected("a column name" + after());
        }
        String column = (String) advance().value();
        return switch (operator) {
          case EQ -> Expressions.equal(column, value);
          case NOT_EQ -> Expressions.notEqual(column, value);
          case LT -> Expressions.greaterThan(column, value);
          case LT_EQ -> Expressions.greaterThanOrEqual(column, value);
          case GT -> Expressions.lessThan(column, value);
          case GT_EQ -> Expressions.lessThanOrEqual(column, value);
          default -> throw new IllegalStateException("Unhandled comparison: " + operator);
        };
      }
      if (first.kind() == Token.Kind.TRUE) {
        return Expressions.alwaysTrue();
      } else if (first.kind() == Token.Kind.FALSE) {
        return Expressions.alwaysFalse();
      }
      throw expected("a comparison (=, !=, <>, <, <=, >, >=) and a column name" + after());
    }

    private Expression predicate(Token name) {
      String column = (String) name.value();
      Token.Kind operator = current.kind();
      // Checked before advancing, so that a problem in the next token cannot hide this one.
      if (!PREDICATE_OPERATORS.contains(operator)) {
        throw expected(
            "an operator (=, !=, <>, <, <=, >, >=, in, not in, is, starts with, not starts with,"
                + " like, not like, between, not between)"
                + after());
      }
      advance();
      return switch (operator) {
        case EQ -> Expressions.equal(column, value());
        case NOT_EQ -> Expressions.notEqual(column, value());
        case LT -> Expressions.lessThan(column, value());
        case LT_EQ -> Expressions.lessThanOrEqual(column, value());
        case GT -> Expressions.greaterThan(column, value());
        case GT_EQ -> Expressions.greaterThanOrEqual(column, value());
        case IN -> Expressions.in(column, valueList());
        case STARTS -> Expressions.startsWith(column, prefix());
        case LIKE -> like(column, false);
        case BETWEEN -> between(column);
        case IS -> isPredicate(column);
        case NOT -> negatedPredicate(column);
        default -> throw new IllegalStateException("Unhandled operator: " + operator);
      };
    }

    // "is" [ "not" ] ( "null" | "nan" )
    private Expression isPredicate(String column) {
      boolean negated = accept(Token.Kind.NOT);
      if (accept(Token.Kind.NULL)) {
        return negated ? Expressions.notNull(column) : Expressions.isNull(column);
      } else if (accept(Token.Kind.NAN)) {
        return negated ? Expressions.notNaN(column) : Expressions.isNaN(column);
      }
      throw expected(negated ? "'null' or 'nan' after 'not'" : "'null', 'nan' or 'not' after 'is'");
    }

    // "not" ( "in" value-list | "starts" "with" string | "between" value "and" value )
    private Expression negatedPredicate(String column) {
      if (accept(Token.Kind.IN)) {
        return Expressions.notIn(column, valueList());
      } else if (accept(Token.Kind.STARTS)) {
        return Expressions.notStartsWith(column, prefix());
      } else if (accept(Token.Kind.LIKE)) {
        return like(column, true);
      } else if (accept(Token.Kind.BETWEEN)) {
        return Expressions.not(between(column));
      }
      throw expected("'in', 'starts with', 'like' or 'between' after 'not'");
    }

    private Expression between(String column) {
      Object lower = value();
      expect(Token.Kind.AND, "'and' after the lower bound of 'between'");
      Object upper = value();
      return Expressions.and(
          Expressions.greaterThanOrEqual(column, lower),
          Expressions.lessThanOrEqual(column, upper));
    }

    /**
     * {@code like 'abc%'} as PyIceberg reads it: a single trailing {@code %} makes a prefix test,
     * no wildcard an equality; {@code \%} is a literal percent sign. Other patterns cannot be
     * pushed down as Iceberg expressions and are refused.
     */
    private Expression like(String column, boolean negated) {
      if (current.kind() != Token.Kind.STRING) {
        throw expected("a quoted pattern after 'like'");
      }
      Token pattern = advance();
      String raw = (String) pattern.value();
      boolean prefix = raw.endsWith("%") && !raw.endsWith("\\%");
      String body = prefix ? raw.substring(0, raw.length() - 1) : raw;
      if (body.replace("\\%", "").contains("%")) {
        throw error(
            pattern,
            "unsupported pattern "
                + Excerpt.of(pattern.text())
                + ", expected '%' only at the end (as in 'abc%'), or \\% for a literal '%'");
      }
      String literal = body.replace("\\%", "%");
      if (prefix) {
        return negated
            ? Expressions.notStartsWith(column, literal)
            : Expressions.startsWith(column, literal);
      }
      return negated ? Expressions.notEqual(column, literal) : Expressions.equal(column, literal);
    }

    // "with" string, after "starts"
    private String prefix() {
      expect(Token.Kind.WITH, "'with' after 'starts'");
      if (current.kind() != Token.Kind.STRING) {
        throw expected("a quoted string after 'starts with'");
      }
      return (String) advance().value();
    }

    // "(" value { "," value } ")"
    private List<Object> valueList() {
      expect(Token.Kind.LEFT_PAREN, "'('" + after());
      if (current.kind() == Token.Kind.RIGHT_PAREN) {
        throw expected("at least one value in the list");
      }
      List<Object> values = new ArrayList<>();
      values.add(value());
      while (accept(Token.Kind.COMMA)) {
        values.add(value());
      }
      expect(Token.Kind.RIGHT_PAREN, "',' or ')'" + after() + " in the value list");
      return values;
    }

    // value = number | string | binary | "true" | "false"
    private Object value() {
      return switch (current.kind()) {
        case NUMBER, STRING, BINARY -> advance().value();
        case TRUE -> {
          advance();
          yield Boolean.TRUE;
        }
        case FALSE -> {
          advance();
          yield Boolean.FALSE;
        }
        // Comparing with null matches nothing in SQL, so the user almost surely meant a test.
        case NULL ->
            throw expected(
                "a value" + after() + " (test for null with 'is null' or 'is not null')");
        case NAME ->
            // Often a string in double quotes, which name columns in SQL and PyIceberg.
            throw error(
                current,
                "expected a value"
                    + after()
                    + " but found column "
                    + Excerpt.of(current.text())
                    + " (a filter compares a column with a value; write 'single quotes' for a"
                    + " string)");
        default -> throw expected("a value" + after());
      };
    }

    private void nest(Token token) {
      depth += 1;
      if (depth > MAX_NESTING) {
        throw error(
            token,
            String.format(
                "too deeply nested, expected at most %d levels of parentheses and 'not'",
                MAX_NESTING));
      }
    }

    private boolean accept(Token.Kind kind) {
      if (current.kind() == kind) {
        advance();
        return true;
      }
      return false;
    }

    private void expect(Token.Kind kind, String expected) {
      if (!accept(kind)) {
        throw expected(expected);
      }
    }

    private Token advance() {
      previous = current;
      current = lexer.next();
      return previous;
    }

    /** " after 'x'" naming the last token read, or nothing at the start of the filter. */
    private String after() {
      return previous == null ? "" : " after " + previous.mention();
    }

    private RowFilterSyntaxException expected(String expected) {
      return error(current, "expected " + expected + " but found " + current.describe());
    }

    private RowFilterSyntaxException error(Token at, String detail) {
      return new RowFilterSyntaxException(text, at.position(), detail);
    }
  }
}
