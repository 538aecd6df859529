package io.floe.initializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The SDK's {@code cache://<schema>/<table>}, and each way it can be malformed, by name. */
class CacheUriTest {
  @Test
  void aSchemaAndATable() {
    CacheUri uri = CacheUri.parse("cache://my_schema/my_table");
    assertThat(uri.schema()).isEqualTo("my_schema");
    assertThat(uri.table()).isEqualTo("my_table");
    assertThat(uri.identifier()).isEqualTo("my_schema.my_table");
    assertThat(CacheUri.parse(" cache://a.b/events ").identifier()).isEqualTo("a.b.events");
  }

  @Test
  void malformedUrisSayWhatIsWrong() {
    assertRefused("cache://", "no schema before the table");
    assertRefused("cache:///table", "no schema before the table");
    assertRefused("cache://schema-only", "no table after schema 'schema-only'");
    assertRefused("cache://schema/", "no table after schema 'schema'");
    assertRefused("cache://schema/table/extra", "more than one segment after the schema");
    assertRefused("cache://schema/tab le", "whitespace");
    assertRefused("cache://schema/table?x=1", "'?x=1' follows the table");
    assertRefused("cache://a..b/table", "schema 'a..b' has an empty part");
  }

  private static void assertRefused(String uri, String what) {
    assertThatThrownBy(() -> CacheUri.parse(uri))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + uri + "'")
        .hasMessageContaining(what)
        .hasMessageContaining("cache://<schema>/<table>");
  }
}
