package io.floe.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ExcerptTest {
  @Test
  void quotesShortValuesWholeAndLongOnesByTheirEndsAndLength() {
    String name = "n".repeat(Excerpt.MAX_CHARS);
    assertThat(Excerpt.of(name)).isEqualTo(name);
    assertThat(Excerpt.of(null)).isEqualTo("null");

    String huge = "a".repeat(50_000) + "b".repeat(50_000);
    assertThat(Excerpt.of(huge))
        .isEqualTo("a".repeat(64) + "…" + "b".repeat(64) + " (100000 characters)");
  }

  @Test
  void quotesTheWindowAroundAPosition() {
    String filter = "x = 1 and ".repeat(10_000) + "y >= ";
    String window = Excerpt.around(filter, filter.length());

    assertThat(window).startsWith("…").endsWith("y >=  (100005 characters)");
    assertThat(window.length()).isLessThanOrEqualTo(Excerpt.MAX_CHARS + 30);
    assertThat(Excerpt.around(filter, 0)).startsWith("x = 1 and").contains("… (100005 characters)");
    assertThat(Excerpt.around("y >= ", 4)).isEqualTo("y >= ");
  }

  @Test
  void escapesControlCharactersSoThatAQuoteCannotStartALogLine() {
    assertThat(Excerpt.of("a\nINFO forged\r\t\u0000"))
        .isEqualTo("a\\nINFO forged\\r\\t\\u0000")
        .doesNotContain("\n");
    assertThat(Excerpt.around("\n".repeat(1_000), 500)).doesNotContain("\n");
  }

  @Test
  void neverSplitsASurrogatePair() {
    String emoji = "\uD83D\uDE00";
    String text = "x".repeat(63) + emoji.repeat(100);
    String quoted = Excerpt.of(text);

    assertThat(quoted).startsWith("x".repeat(63) + "…");
    // A lone surrogate would be a code point of its own.
    assertThat(quoted.codePoints().filter(cp -> cp >= 0xD800 && cp <= 0xDFFF)).isEmpty();
  }

  @Test
  void boundsAWholeDescriptionIncludingItsNote() {
    String description = "d".repeat(5_000);
    String bounded = Excerpt.description(description);

    assertThat(bounded)
        .hasSize(Excerpt.MAX_DESCRIPTION_CHARS)
        .endsWith("(cut from 5000 characters)");
    String fits = "d".repeat(Excerpt.MAX_DESCRIPTION_CHARS);
    assertThat(Excerpt.description(fits)).isSameAs(fits);
  }

  @Test
  void locationsAreQuotedWholeUpToTheirOwnBound() {
    String abfs =
        "abfs://floe-test@devstoreaccount1.dfs.core.windows.net/warehouse/db/events/metadata/"
            + "00001-1b3a2f43-6ef6-42f9-9855-7afe477b3888.metadata.json";
    assertThat(abfs.length()).isGreaterThan(Excerpt.MAX_CHARS);
    assertThat(Excerpt.location(abfs)).isEqualTo(abfs);

    String huge = "s3://b/" + "k".repeat(300) + "MIDDLE" + "k".repeat(300) + ".parquet";
    assertThat(Excerpt.location(huge))
        .startsWith("s3://b/kkk")
        .endsWith("kkk.parquet (" + huge.length() + " characters)")
        .doesNotContain("MIDDLE")
        .hasSizeLessThan(Excerpt.MAX_LOCATION_CHARS + 30);
  }
}
