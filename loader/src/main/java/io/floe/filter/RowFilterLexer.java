package io.floe.filter;

import io.floe.util.Excerpt;
import java.math.BigDecimal;

/**
 * Splits a row filter into {@link Token}s on demand, so that the parser reports the leftmost
 * problem even when a later part of the filter could not be tokenized either.
 */
final class RowFilterLexer {
  private static final char QUOTE = '\'';
  private static final char BACKQUOTE = '`';
  private static final char DOUBLE_QUOTE = '"';

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
    if ((ch == 'x' || ch == 'X') && peek(1) == QUOTE) {
      return binary();
    } else if (isNameStart(ch) || isNameQuote(ch)) {
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
        // "==" as PyIceberg writes equality.
        return symbol(Token.Kind.EQ, start, peek(1) == '=' ? 2 : 1);
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

  /**
   * A column path such as {@code a.b.c}, {@code `weird col`.x} or {@code "weird col".x} (double
   * quotes as in SQL and PyIceberg), or a keyword.
   */
  private Token name() {
    int start = index;
    StringBuilder name = new StringBuilder();
    boolean quoted = segment(name);
    boolean dotted = false;
    while (peek(0) == '.') {
      index += 1;
      if (!isNameStart(peek(0)) && !isNameQuote(peek(0))) {
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

  /** Appends one bare or quoted name segment and returns whether it was quoted. */
  private boolean segment(StringBuilder name) {
    char quote = peek(0);
    if (!isNameQuote(quote)) {
      while (index < text.length() && isNamePart(text.charAt(index))) {
        name.append(text.charAt(index));
        index += 1;
      }
      return false;
    }

    int start = index;
    String content = quoted(quote, "quoted name");
    if (content.isEmpty()) {
      throw error(
          start,
          "empty quoted name, expected at least one character between "
              + (quote == BACKQUOTE ? "backquotes" : "double quotes"));
    }
    name.append(content);
    return true;
  }

  /** {@code X'0a1B'}: bytes for binary and fixed columns, two hex digits each. */
  private Token binary() {
    int start = index;
    index += 1;
    String hex = quoted(QUOTE, "binary literal");
    if (hex.length() % 2 != 0 || !hex.chars().allMatch(RowFilterLexer::isHexDigit)) {
      throw error(
          start,
          "invalid binary literal "
              + Excerpt.of(text.substring(start, index))
              + ", expected an even number of hex digits between X' and '");
    }
    return new Token(
        Token.Kind.BINARY,
        text.substring(start, index),
        start + 1,
        java.nio.ByteBuffer.wrap(java.util.HexFormat.of().parseHex(hex)).asReadOnlyBuffer());
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
   * An integer becomes an Integer, or a Long when it does not fit, or a BigDecimal beyond a long; a
   * number with a fraction or an exponent becomes an exact BigDecimal. Binding converts the value
   * to the column's type ({@link FilterBinding}), so nothing is rounded before the type is known.
   */
  private Token number() {
    int start = index;
    if (peek(0) == '-') {
      index += 1;
    }
    digits(index > start ? "a digit after '-'" : "a digit");
    if (peek(0) == '.') {
      index += 1;
      digits("a digit after '.'");
    }
    if (peek(0) == 'e' || peek(0) == 'E') {
      index += 1;
      if (peek(0) == '+' || peek(0) == '-') {
        index += 1;
      }
      digits("a digit in the exponent");
    }

    String raw = text.substring(start, index);
    // Without this check "12abc" would read as a number followed by a column name, and the error
    // would point at the wrong place.
    if (isNamePart(peek(0)) || peek(0) == '.' || isNameQuote(peek(0))) {
      throw error(
          index,
          "unexpected character "
              + describe(peek(0))
              + " after number "
              + Excerpt.of(raw)
              + ", expected a space, an operator or a parenthesis");
    }
    return new Token(Token.Kind.NUMBER, raw, start + 1, numberValue(raw, start));
  }

  private Object numberValue(String raw, int start) {
    BigDecimal exact;
    try {
      exact = new BigDecimal(raw);
    } catch (ArithmeticException | NumberFormatException e) {
      throw error(start, "number " + Excerpt.of(raw) + " is out of range");
    }
    if (raw.indexOf('.') >= 0 || raw.indexOf('e') >= 0 || raw.indexOf('E') >= 0) {
      // -0.0 means the number zero; keep the scale so "3.50" reads as written.
      return exact.signum() == 0 ? exact.abs() : exact;
    }
    if (exact.compareTo(BigDecimal.valueOf(Integer.MIN_VALUE)) >= 0
        && exact.compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) <= 0) {
      return exact.intValue();
    }
    if (exact.compareTo(BigDecimal.valueOf(Long.MIN_VALUE)) >= 0
        && exact.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) <= 0) {
      return exact.longValue();
    }
    return exact;
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

  private static boolean isNameQuote(char ch) {
    return ch == BACKQUOTE || ch == DOUBLE_QUOTE;
  }

  private static boolean isHexDigit(int ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
  }

  private static boolean isNameStart(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
  }

  private static boolean isNamePart(char ch) {
    // '$' as PyIceberg's identifiers allow it after the first character.
    return isNameStart(ch) || isDigit(ch) || ch == '$';
  }

  private static boolean isDigit(char ch) {
    return ch >= '0' && ch <= '9';
  }
}
