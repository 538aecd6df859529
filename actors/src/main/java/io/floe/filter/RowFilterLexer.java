package io.floe.filter;

import java.math.BigDecimal;

/**
 * Splits a row filter into {@link Token}s on demand, so that the parser reports the leftmost
 * problem even when a later part of the filter could not be tokenized either.
 */
final class RowFilterLexer {
  private static final char QUOTE = '\'';
  private static final char BACKQUOTE = '`';

  private final String text;
  private int index = 0;

  RowFilterLexer(String text) {
    this.text = text;
  }

  Token next() {
    while (index < text.length() && Character.isWhitespace(text.charAt(index))) {
      index += 1;
    }
    if (index >= text.length()) {
      return new Token(Token.Kind.END, "", text.length() + 1, null);
    }

    char ch = text.charAt(index);
    if (isNameStart(ch) || ch == BACKQUOTE) {
      return name();
    } else if (isDigit(ch) || ch == '-') {
      return number();
    } else if (ch == QUOTE) {
      return string();
    }
    return symbol(ch);
  }

  private Token symbol(char ch) {
    int start = index;
    switch (ch) {
      case '(':
        return symbol(Token.Kind.LEFT_PAREN, start, 1);
      case ')':
        return symbol(Token.Kind.RIGHT_PAREN, start, 1);
      case ',':
        return symbol(Token.Kind.COMMA, start, 1);
      case '=':
        return symbol(Token.Kind.EQ, start, 1);
      case '!':
        if (peek(1) == '=') {
          return symbol(Token.Kind.NOT_EQ, start, 2);
        }
        throw error(start, "unexpected character '!', expected '!='");
      case '<':
        if (peek(1) == '=') {
          return symbol(Token.Kind.LT_EQ, start, 2);
        } else if (peek(1) == '>') {
          return symbol(Token.Kind.NOT_EQ, start, 2);
        }
        return symbol(Token.Kind.LT, start, 1);
      case '>':
        if (peek(1) == '=') {
          return symbol(Token.Kind.GT_EQ, start, 2);
        }
        return symbol(Token.Kind.GT, start, 1);
      case '"':
        // A frequent slip for people used to other SQL dialects, so say what to use instead.
        throw error(
            start,
            "unexpected character '\"', expected 'single quotes' around a string"
                + " or `backquotes` around a column name");
      default:
        throw error(
            start,
            "unexpected character "
                + describe(ch)
                + ", expected a column name, a value, an operator, ',' or a parenthesis");
    }
  }

  private Token symbol(Token.Kind kind, int start, int length) {
    index = start + length;
    return new Token(kind, text.substring(start, index), start + 1, null);
  }

  /** A column path such as {@code a.b.c} or {@code `weird col`.x}, or a keyword. */
  private Token name() {
    int start = index;
    StringBuilder name = new StringBuilder();
    boolean quoted = segment(name);
    boolean dotted = false;
    while (peek(0) == '.') {
      index += 1;
      if (!isNameStart(peek(0)) && peek(0) != BACKQUOTE) {
        throw error(index, "expected a name after '.' but found " + describeAt(index));
      }
      name.append('.');
      segment(name);
      dotted = true;
    }

    String raw = text.substring(start, index);
    Token.Kind keyword = quoted || dotted ? null : Token.Kind.keyword(raw);
    if (keyword != null) {
      return new Token(keyword, raw, start + 1, null);
    }
    return new Token(Token.Kind.NAME, raw, start + 1, name.toString());
  }

  /** Appends one bare or backquoted name segment and returns whether it was backquoted. */
  private boolean segment(StringBuilder name) {
    if (peek(0) != BACKQUOTE) {
      while (index < text.length() && isNamePart(text.charAt(index))) {
        name.append(text.charAt(index));
        index += 1;
      }
      return false;
    }

    int start = index;
    String content = quoted(BACKQUOTE, "quoted name");
    if (content.isEmpty()) {
      throw error(start, "empty quoted name, expected at least one character between backquotes");
    }
    name.append(content);
    return true;
  }

  private Token string() {
    int start = index;
    String value = quoted(QUOTE, "string");
    return new Token(Token.Kind.STRING, text.substring(start, index), start + 1, value);
  }

  /** Reads text between two {@code quote}s, where a doubled quote stands for one. */
  private String quoted(char quote, String what) {
    int start = index;
    StringBuilder value = new StringBuilder();
    index += 1;
    while (index < text.length()) {
      char ch = text.charAt(index);
      index += 1;
      if (ch != quote) {
        value.append(ch);
      } else if (peek(0) == quote) {
        value.append(quote);
        index += 1;
      } else {
        return value.toString();
      }
    }
    throw error(
        start,
        String.format("unterminated %s, expected a closing %c before end of input", what, quote));
  }

  /**
   * An integer becomes an Integer, or a Long when it does not fit; a number with a fraction or an
   * exponent becomes a Double, the one literal type Iceberg converts to float, double and decimal
   * columns alike (a BigDecimal literal would only bind to decimal columns).
   */
  private Token number() {
    int start = index;
    if (peek(0) == '-') {
      index += 1;
    }
    digits(index > start ? "a digit after '-'" : "a digit");
    boolean integral = true;
    if (peek(0) == '.') {
      index += 1;
      digits("a digit after '.'");
      integral = false;
    }
    if (peek(0) == 'e' || peek(0) == 'E') {
      index += 1;
      if (peek(0) == '+' || peek(0) == '-') {
        index += 1;
      }
      digits("a digit in the exponent");
      integral = false;
    }

    String raw = text.substring(start, index);
    // Without this check "12abc" would read as a number followed by a column name, and the error
    // would point at the wrong place.
    if (isNamePart(peek(0)) || peek(0) == '.' || peek(0) == BACKQUOTE) {
      throw error(
          index,
          "unexpected character "
              + describe(peek(0))
              + " after number "
              + raw
              + ", expected a space, an operator or a parenthesis");
    }
    Object value = integral ? integer(raw, start) : floating(raw, start);
    return new Token(Token.Kind.NUMBER, raw, start + 1, value);
  }

  private Object integer(String raw, int start) {
    long value;
    try {
      value = Long.parseLong(raw);
    } catch (NumberFormatException e) {
      throw error(
          start,
          String.format(
              "integer %s is out of range, expected a value between %d and %d",
              raw, Long.MIN_VALUE, Long.MAX_VALUE));
    }
    if (value >= Integer.MIN_VALUE && value <= Integer.MAX_VALUE) {
      return (int) value;
    }
    return value;
  }

  private Object floating(String raw, int start) {
    BigDecimal exact = new BigDecimal(raw);
    double value = exact.doubleValue();
    // Rounding here would silently change which rows match, so refuse instead.
    if (!Double.isFinite(value) || BigDecimal.valueOf(value).compareTo(exact) != 0) {
      throw error(
          start,
          "number "
              + raw
              + " cannot be represented as a double without rounding, expected at most 15"
              + " significant digits within the range of a double (quote it, as in '"
              + raw
              + "', to compare it exactly with a decimal column)");
    }
    // Iceberg orders -0.0 before 0.0, but the literal means the number zero.
    return value == 0.0 ? 0.0 : value;
  }

  private void digits(String expected) {
    if (!isDigit(peek(0))) {
      throw error(index, "expected " + expected + " but found " + describeAt(index));
    }
    while (isDigit(peek(0))) {
      index += 1;
    }
  }

  /** The character {@code offset} places ahead, or NUL past the end; NUL matches no rule. */
  private char peek(int offset) {
    int at = index + offset;
    return at < text.length() ? text.charAt(at) : '\0';
  }

  private String describeAt(int at) {
    return at < text.length() ? describe(text.charAt(at)) : "end of input";
  }

  private static String describe(char ch) {
    if (Character.isWhitespace(ch) || Character.isISOControl(ch)) {
      return String.format("character U+%04X", (int) ch);
    }
    return "'" + ch + "'";
  }

  private RowFilterSyntaxException error(int at, String detail) {
    return new RowFilterSyntaxException(text, at + 1, detail);
  }

  private static boolean isNameStart(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
  }

  private static boolean isNamePart(char ch) {
    return isNameStart(ch) || isDigit(ch);
  }

  private static boolean isDigit(char ch) {
    return ch >= '0' && ch <= '9';
  }
}
