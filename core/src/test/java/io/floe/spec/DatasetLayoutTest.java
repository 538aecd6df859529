package io.floe.spec;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spec.DatasetLayout.SliceRows;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a layout's fingerprint covers: what decides which row sits at each global position. */
class DatasetLayoutTest {
  private static final String SCHEMA = "{\"fields\":[{\"name\":\"id\"}]}";

  private static DatasetLayout layout(
      long snapshot, String filter, String schema, String generation, String holder, long... rows) {
    List<SliceRows> slices =
        java.util.stream.IntStream.range(0, rows.length)
            .mapToObj(i -> new SliceRows("events/" + generation + "/" + i, rows[i], 100, holder))
            .toList();
    return new DatasetLayout("events", snapshot, filter, schema, slices);
  }

  @Test
  void loadingAgainTheSameWayKeepsTheFingerprint() {
    assertThat(layout(7, "id < 10", SCHEMA, "g1", "grpc://a:1", 5, 5).fingerprint())
        .isEqualTo(layout(7, "id < 10", SCHEMA, "g2", "grpc://b:2", 5, 5).fingerprint());
  }

  @Test
  void anythingThatChangesWhichRowIsWhereChangesIt() {
    String base = layout(7, "id < 10", SCHEMA, "g1", "h", 5, 5).fingerprint();
    assertThat(
            List.of(
                layout(8, "id < 10", SCHEMA, "g1", "h", 5, 5),
                layout(7, "id >= 10 and id < 20", SCHEMA, "g1", "h", 5, 5),
                layout(7, "", SCHEMA, "g1", "h", 5, 5),
                layout(7, "id < 10", "{\"fields\":[{\"name\":\"ts\"}]}", "g1", "h", 5, 5),
                layout(7, "id < 10", SCHEMA, "g1", "h", 4, 6),
                layout(7, "id < 10", SCHEMA, "g1", "h", 5, 5, 0)))
        .extracting(DatasetLayout::fingerprint)
        .doesNotContain(base)
        .doesNotHaveDuplicates();
  }
}
