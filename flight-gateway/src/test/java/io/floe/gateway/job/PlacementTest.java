package io.floe.gateway.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spec.DatasetLayout;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A layout is placed once per nodes to avoid and the placement reused while the layout object is
 * the same (a plan and every stream of it); a layout whose slices moved is another object and is
 * placed again, never answered from the placement of an equal-looking one.
 */
class PlacementTest {
  private static DatasetLayout layout(String secondHolder) {
    return new DatasetLayout(
        "events",
        1,
        null,
        "{}",
        List.of(
            new DatasetLayout.SliceRows(
                "events/1/a", 10, 100, "grpc+tcp://127.0.0.1:1", List.of("grpc+tcp://127.0.0.1:2")),
            new DatasetLayout.SliceRows("events/1/b", 10, 100, secondHolder, List.of())));
  }

  @Test
  void aLayoutIsPlacedOncePerNodesToAvoidAndAgainWhenItsSlicesMove() {
    DatasetLayout layout = layout("grpc+tcp://127.0.0.1:1");

    Placement first = Placement.of(layout, List.of());
    assertThat(Placement.of(layout, Set.of())).isSameAs(first);
    assertThat(first.holders()).containsExactly("grpc+tcp://127.0.0.1:1");

    Placement avoiding = Placement.of(layout, List.of("grpc+tcp://127.0.0.1:1"));
    assertThat(avoiding).isNotSameAs(first);
    assertThat(avoiding.holders())
        .containsExactly("grpc+tcp://127.0.0.1:2", "grpc+tcp://127.0.0.1:1");
    assertThat(avoiding.fingerprint()).isNotEqualTo(first.fingerprint());

    Placement moved = Placement.of(layout("grpc+tcp://127.0.0.1:3"), List.of());
    assertThat(moved.holders()).containsExactly("grpc+tcp://127.0.0.1:1", "grpc+tcp://127.0.0.1:3");
    assertThat(moved.fingerprint()).isNotEqualTo(first.fingerprint());
  }
}
