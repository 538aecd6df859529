package io.floe.filter;

import io.floe.util.Excerpt;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * One lexical unit of a row filter.
 *
 * @param kind what the token is
 * @param text the token exactly as written, for error messages (which quote it as an {@link
 *     Excerpt})
 * @param position 1-based position of the token's first character
 * @param value the decoded column name, string, number or bytes; {@code null} for other kinds
 */
record Token(Token.Kind kind, String text, int position, Object value) {

  enum Kind {
    NAME,
    STRING,
    NUMBER,
    BINARY,
    LEFT_PAREN,
    RIGHT_PAREN,
    COMMA,
    EQ,
    NOT_EQ,
    LT,
    LT_EQ,
    GT,
    GT_EQ,
    AND(true),
    OR(true),
    NOT(true),
    IN(true),
    IS(true),
    NULL(true),
    NAN(true),
    STARTS(true),
    WITH(true),
    LIKE(true),
    BETWEEN(true),
    TRUE(true),
    FALSE(true),
    END;

    private static final Map<String, Kind> KEYWORDS =
        Arrays.stream(values())
            .filter(kind -> kind.keyword)
            .collect(
                Collectors.toUnmodifiableMap(
                    kind -> kind.name().toLowerCase(Locale.ROOT), Function.identity()));

    private final boolean keyword;

    Kind() {
      this(false);
    }

    Kind(boolean keyword) {
      this.keyword = keyword;
    }

    boolean isKeyword() {
      return keyword;
    }

    /** The keyword spelled {@code word} in any letter case, or {@code null} if it is none. */
    static Kind keyword(String word) {
      return KEYWORDS.get(word.toLowerCase(Locale.ROOT));
    }
  }

  /**
   * How the token reads in "after ..." of an error message: operators and keywords as written, the
   * others with their role, since a bare {@code 'x'} would be ambiguous next to string literals.
   */
  String mention() {
    return switch (kind) {
      // Only ever read as a column, so say so.
      case NAME -> "column '" + Excerpt.of(text) + "'";
      case STRING, NUMBER, BINARY, END -> describe();
      default -> "'" + text + "'";
    };
  }

  /** How the token reads in "but found ..." of an error message. */
  String describe() {
    return switch (kind) {
      case END -> "end of input";
      case NAME -> "name '" + Excerpt.of(text) + "'";
      case BINARY -> "binary " + Excerpt.of(text);
      case STRING -> "string " + Excerpt.of(text);
      case NUMBER -> "number " + Excerpt.of(text);
      default -> kind.isKeyword() ? "keyword '" + text + "'" : "'" + text + "'";
    };
  }
}
