package io.floe.filter;

import io.floe.util.Excerpt;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expression.Operation;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Turns the values written in a filter into literals of one column's type, exactly.
 *
 * <p>Integer, long and decimal columns hold values on a grid (whole numbers, or multiples of
 * 10^-scale) within a range; a literal off that grid or out of that range is not rounded into a
 * different test but folded into the exact equivalent: {@code i < 1.5} is {@code i < 2}, {@code
 * price = 3.555} on a decimal(9,2) column matches nothing, and {@code i < 3000000000} on an int
 * column matches every non-null value. Float and double columns take the nearest value, as
 * PyIceberg and Iceberg convert them. Dates, times, timestamps and UUIDs are ISO strings; binary
 * and fixed values are hex strings or {@code X'..'} literals.
 */
final class ColumnLiterals {
  /** A date, optionally followed by a time after 'T' or a space. */
  private static final Pattern LOCAL_DATE_TIME =
      Pattern.compile("\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?)?");

  private final String column;
  private final Type.PrimitiveType type;

  /** The filter as messages quote it: an {@link Excerpt}. */
  private final String filterText;

  ColumnLiterals(String column, Type.PrimitiveType type, String filterText) {
    this.column = column;
    this.type = type;
    this.filterText = filterText;
  }

  /** {@code column op value} for a comparison (=, !=, <, <=, >, >=). */
  Expression compare(Operation op, Object value) {
    if (!isGrid()) {
      return Expressions.predicate(op, column, List.of(exact(value)));
    }
    BigDecimal number = number(value);
    Grid grid = grid();
    boolean below = op == Operation.LT || op == Operation.LT_EQ;
    if (number.compareTo(grid.max()) > 0 || number.compareTo(grid.min()) < 0) {
      // Out of the column's range: every value is on one side of it.
      boolean aboveAll = number.signum() > 0;
      return switch (op) {
        case EQ -> Expressions.alwaysFalse();
        case NOT_EQ -> Expressions.notNull(column);
        default -> below == aboveAll ? Expressions.notNull(column) : Expressions.alwaysFalse();
      };
    }
    return switch (op) {
      case EQ -> grid.holds(number) ? on(op, number) : Expressions.alwaysFalse();
      case NOT_EQ -> grid.holds(number) ? on(op, number) : Expressions.notNull(column);
      // For grid values x: x < v is x < ceil(v), x <= v is x <= floor(v), and so on.
      case LT -> on(op, grid.ceiling(number));
      case LT_EQ -> on(op, grid.floor(number));
      case GT -> on(op, grid.floor(number));
      case GT_EQ -> on(op, grid.ceiling(number));
      default -> throw new IllegalArgumentException("Not a comparison: " + op);
    };
  }

  /** {@code column in (values)} or {@code not in}, leaving out values the column cannot hold. */
  Expression set(Operation op, List<Object> values) {
    List<Literal<Object>> literals = new ArrayList<>();
    for (Object value : values) {
      if (isGrid()) {
        BigDecimal number = number(value);
        if (grid().holds(number)) {
          literals.add(gridLiteral(number));
        }
      } else {
        literals.add(exact(value));
      }
    }
    if (literals.isEmpty()) {
      return op == Operation.IN ? Expressions.alwaysFalse() : Expressions.notNull(column);
    }
    return Expressions.predicate(op, column, literals);
  }

  /** The value as a literal of the column's type; it must convert without loss. */
  @SuppressWarnings("unchecked")
  Literal<Object> exact(Object value) {
    if (isGrid()) {
      BigDecimal number = number(value);
      if (!grid().holds(number)) {
        throw invalid(value, "a value " + type + " can hold");
      }
      return gridLiteral(number);
    }
    return (Literal<Object>) (Literal<?>) converted(value);
  }

  private Literal<?> converted(Object value) {
    switch (type.typeId()) {
      case BOOLEAN:
        if (value instanceof Boolean bool) {
          return Literal.of(bool);
        }
        if (value instanceof CharSequence text
            && ("true".equalsIgnoreCase(text.toString())
                || "false".equalsIgnoreCase(text.toString()))) {
          return Literal.of(Boolean.parseBoolean(text.toString()));
        }
        throw invalid(value, "true or false");
      case FLOAT:
        if (value instanceof Boolean) {
          throw invalid(value, "a number");
        }
        return Literal.of(number(value).floatValue());
      case DOUBLE:
        if (value instanceof Boolean) {
          throw invalid(value, "a number");
        }
        return Literal.of(number(value).doubleValue());
      case STRING:
        if (value instanceof CharSequence text) {
          return Literal.of(text.toString());
        }
        throw invalid(value, "a quoted string");
      case DATE:
        return temporal(value, "a date as 'YYYY-MM-DD'");
      case TIME:
        return temporal(value, "a time as 'HH:MM:SS[.ffffff]'");
      case TIMESTAMP:
      case TIMESTAMP_NANO:
        return timestamp(value);
      case UUID:
        if (value instanceof java.util.UUID uuid) {
          return Literal.of(uuid);
        }
        if (value instanceof CharSequence text) {
          try {
            return Literal.of(text.toString()).to(type);
          } catch (IllegalArgumentException e) {
            // UUID.fromString's message is about its parser, not the filter.
          }
        }
        throw invalid(value, "a UUID as 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx'");
      case FIXED:
      case BINARY:
        return bytes(value);
      default:
        throw new InvalidFilterException(
            String.format(
                "Invalid filter \"%s\": column '%s' is %s, which filters do not support",
                filterText, Excerpt.of(column), type));
    }
  }

  private Literal<?> temporal(Object value, String expected) {
    if (!(value instanceof CharSequence text)) {
      throw invalid(value, expected);
    }
    try {
      return Literal.of(text.toString().trim()).to(type);
    } catch (DateTimeParseException e) {
      throw invalid(value, expected);
    }
  }

  /**
   * ISO timestamps, with 'T' or a space between date and time, or a date alone for midnight. A
   * timestamp with time zone needs an offset ('Z' or '+02:00'); one without must not have one.
   */
  private Literal<?> timestamp(Object value) {
    boolean zoned =
        type instanceof Types.TimestampType ts
            ? ts.shouldAdjustToUTC()
            : ((Types.TimestampNanoType) type).shouldAdjustToUTC();
    String expected =
        zoned
            ? "a timestamp with a UTC offset, as '2024-05-01T12:00:00+00:00' or"
                + " '2024-05-01T12:00:00Z'"
            : "a timestamp without offset, as '2024-05-01T12:00:00' or '2024-05-01'";
    if (!(value instanceof CharSequence chars)) {
      throw invalid(value, expected);
    }
    String text = chars.toString().trim();
    String local = text;
    String offset = "";
    if (zoned) {
      int at = offsetStart(text);
      if (at < 0) {
        throw invalid(value, expected);
      }
      local = text.substring(0, at);
      offset = text.substring(at);
    }
    if (!LOCAL_DATE_TIME.matcher(local).matches()) {
      throw invalid(value, expected);
    }
    String iso = local.length() == 10 ? local + "T00:00:00" : local.replace(' ', 'T');
    try {
      return Literal.of(iso + offset).to(type);
    } catch (DateTimeParseException e) {
      throw invalid(value, expected);
    }
  }

  /** Where a trailing 'Z' or ±HH:MM offset starts, or -1. */
  private static int offsetStart(String text) {
    if (text.endsWith("Z") || text.endsWith("z")) {
      return text.length() - 1;
    }
    int at = Math.max(text.lastIndexOf('+'), text.lastIndexOf('-'));
    return at > 10 ? at : -1;
  }

  private Literal<?> bytes(Object value) {
    Literal<?> literal;
    if (value instanceof ByteBuffer buffer) {
      literal = Literal.of(buffer).to(type);
    } else if (value instanceof CharSequence text) {
      // Iceberg reads a string literal for a binary column as hex.
      literal = Literal.of(text.toString()).to(type);
    } else {
      literal = null;
    }
    if (literal == null) {
      String expected =
          type instanceof Types.FixedType fixed
              ? "exactly " + fixed.length() + " bytes, written X'0a1b..' or as a hex string"
              : "bytes, written X'0a1b..' or as a hex string";
      throw invalid(value, expected);
    }
    return literal;
  }

  private boolean isGrid() {
    return type.typeId() == Type.TypeID.INTEGER
        || type.typeId() == Type.TypeID.LONG
        || type.typeId() == Type.TypeID.DECIMAL;
  }

  private Grid grid() {
    switch (type.typeId()) {
      case INTEGER:
        return new Grid(
            0, BigDecimal.valueOf(Integer.MIN_VALUE), BigDecimal.valueOf(Integer.MAX_VALUE));
      case LONG:
        return new Grid(0, BigDecimal.valueOf(Long.MIN_VALUE), BigDecimal.valueOf(Long.MAX_VALUE));
      default:
        Types.DecimalType decimal = (Types.DecimalType) type;
        BigDecimal max =
            new BigDecimal(BigInteger.TEN.pow(decimal.precision()).subtract(BigInteger.ONE))
                .scaleByPowerOfTen(-decimal.scale());
        return new Grid(decimal.scale(), max.negate(), max);
    }
  }

  private Expression on(Operation op, BigDecimal number) {
    return Expressions.predicate(op, column, List.of(gridLiteral(number)));
  }

  @SuppressWarnings("unchecked")
  private Literal<Object> gridLiteral(BigDecimal number) {
    Literal<?> literal;
    switch (type.typeId()) {
      case INTEGER:
        literal = Literal.of(number.intValueExact());
        break;
      case LONG:
        literal = Literal.of(number.longValueExact());
        break;
      default:
        literal = Literal.of(number.setScale(((Types.DecimalType) type).scale()));
    }
    return (Literal<Object>) (Literal<?>) literal;
  }

  /** A numeric value: a number literal, or a quoted number (exact for decimals). */
  private BigDecimal number(Object value) {
    if (value instanceof BigDecimal decimal) {
      return decimal;
    } else if (value instanceof Integer || value instanceof Long) {
      return BigDecimal.valueOf(((Number) value).longValue());
    } else if (value instanceof Float || value instanceof Double) {
      double d = ((Number) value).doubleValue();
      if (!Double.isFinite(d)) {
        throw invalid(value, "a finite number (test for NaN with 'is nan')");
      }
      // The shortest decimal that reads back as this double: what the user wrote in JSON.
      return BigDecimal.valueOf(d);
    } else if (value instanceof CharSequence text) {
      try {
        return new BigDecimal(text.toString().trim());
      } catch (NumberFormatException e) {
        throw invalid(value, "a number");
      }
    }
    throw invalid(value, "a number");
  }

  private InvalidFilterException invalid(Object value, String expected) {
    return new InvalidFilterException(
        String.format(
            "Invalid literal %s for column '%s' of type %s in filter \"%s\": expected %s",
            show(value), Excerpt.of(column), type, filterText, expected));
  }

  private static String show(Object value) {
    if (value instanceof CharSequence text) {
      return "'" + Excerpt.of(text) + "'";
    } else if (value instanceof ByteBuffer buffer) {
      ByteBuffer copy = buffer.duplicate();
      byte[] bytes = new byte[copy.remaining()];
      copy.get(bytes);
      return "X'"
          + Excerpt.of(java.util.HexFormat.of().formatHex(bytes).toUpperCase(Locale.ROOT))
          + "'";
    } else if (value instanceof BigDecimal decimal) {
      // Plain unless that is long: 1e-999999999 written out has a billion zeros.
      return Excerpt.of(
          Math.abs((long) decimal.scale()) <= Excerpt.MAX_CHARS
              ? decimal.toPlainString()
              : decimal.toString());
    }
    return Excerpt.of(value);
  }

  /** The values a grid column holds: multiples of 10^-scale in [min, max]. */
  private record Grid(int scale, BigDecimal min, BigDecimal max) {
    boolean holds(BigDecimal value) {
      return value.compareTo(min) >= 0
          && value.compareTo(max) <= 0
          && value.stripTrailingZeros().scale() <= scale;
    }

    BigDecimal floor(BigDecimal value) {
      if (isTiny(value)) {
        return value.signum() < 0 ? ulp().negate() : BigDecimal.ZERO.setScale(scale);
      }
      return value.setScale(scale, RoundingMode.FLOOR);
    }

    BigDecimal ceiling(BigDecimal value) {
      if (isTiny(value)) {
        return value.signum() > 0 ? ulp() : BigDecimal.ZERO.setScale(scale);
      }
      return value.setScale(scale, RoundingMode.CEILING);
    }

    /**
     * Below one step of the grid: rounded without {@code setScale}, which would take time and
     * memory in the literal's exponent (1e-999999999).
     */
    private boolean isTiny(BigDecimal value) {
      return value.precision() - value.scale() < -scale - 1;
    }

    private BigDecimal ulp() {
      return BigDecimal.ONE.scaleByPowerOfTen(-scale).setScale(scale);
    }
  }
}
