package io.floe.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.iceberg.data.Record;

/** Row-by-row comparison that names the first differing row instead of printing whole tables. */
public final class RecordAssertions {
  private RecordAssertions() {}

  /** Asserts both lists hold equal records in the same order (sort both by id first). */
  public static void assertSameRows(List<Record> actual, List<Record> expected) {
    int common = Math.min(actual.size(), expected.size());
    for (int i = 0; i < common; i++) {
      assertThat(actual.get(i)).as("row %d", i).isEqualTo(expected.get(i));
    }
    assertThat(actual.size()).as("row count").isEqualTo(expected.size());
  }
}
