package io.floe.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.iceberg.ScanPlan;
import io.floe.iceberg.SliceSpec;
import io.floe.spec.DatasetLayout;
import io.floe.spec.TableSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A version of a dataset of two replicas: a slice is readable while one copy is held and whole when
 * both are; the layout names the held copies' nodes, the first one as the holder.
 */
class DatasetVersionTest {
  private static final String A = "grpc+tcp://127.0.0.1:1001";
  private static final String B = "grpc+tcp://127.0.0.1:1002";
  private static final String C = "grpc+tcp://127.0.0.1:1003";

  private static DatasetVersion version(int slices, int replicas) {
    List<SliceSpec> specs = new ArrayList<>();
    for (int i = 0; i < slices; i++) {
      specs.add(
          new SliceSpec(
              SliceSpec.sliceId("events", 1, "s" + i),
              new TableSource.AtLocation("/tables/events"),
              "{}",
              null,
              null,
              List.of(),
              1024,
              100));
    }
    return new DatasetVersion(
        new ScanPlan(
            new TableSource.AtLocation("/tables/events"),
            7,
            "{}",
            specs,
            new ScanPlan.MemoryFloor(0, 0)),
        replicas);
  }

  private static SliceEntity.Loaded loaded(int slice, int copy, String holder) {
    return new SliceEntity.Loaded(
        SliceSpec.sliceId("events", 1, "s" + slice), copy, 10, 1_000, holder, "vectorized");
  }

  @Test
  void aSliceIsWholeOnlyWithEveryCopy() {
    DatasetVersion version = version(2, 2);
    version.loaded(loaded(0, 0, A));
    version.loaded(loaded(1, 1, B));

    assertThat(version.allKnown()).isTrue();
    assertThat(version.complete()).isFalse();
    assertThat(version.rows()).isEqualTo(20);

    version.loaded(loaded(0, 1, B));
    version.loaded(loaded(1, 0, C));
    assertThat(version.complete()).isTrue();
    assertThat(version.presentCount()).isEqualTo(2);
    assertThat(version.bytes()).as("every copy's memory").isEqualTo(4_000);
    assertThat(version.missingDispatched()).isEmpty();
  }

  @Test
  void theLayoutNamesTheNodesOfTheCopiesHeld() {
    DatasetVersion version = version(1, 2);
    version.loaded(loaded(0, 0, A));
    version.loaded(loaded(0, 1, B));

    DatasetLayout.SliceRows slice = version.layout("events", "").slices().get(0);
    assertThat(slice.holder()).isEqualTo(A);
    assertThat(slice.standbys()).containsExactly(B);

    version.missing(slice.sliceId(), 0);
    DatasetLayout.SliceRows afterLoss = version.layout("events", "").slices().get(0);
    assertThat(afterLoss.holder()).isEqualTo(B);
    assertThat(afterLoss.standbys()).isEmpty();
    assertThat(version.complete()).isFalse();
    assertThat(version.rows()).as("still readable from the other copy").isEqualTo(10);
  }

  @Test
  void aLostCopyIsAskedAgainByItsOwnEntity() {
    DatasetVersion version = version(1, 2);
    version.nextToDispatch(10);
    version.loaded(loaded(0, 0, A));
    version.loaded(loaded(0, 1, B));
    version.missing(SliceSpec.sliceId("events", 1, "s0"), 1);

    assertThat(version.missingDispatched())
        .extracting(DatasetVersion.Copy::entityId)
        .containsExactly(SliceSpec.sliceId("events", 1, "s0") + "~1");
  }

  @Test
  void copiesOfOneSliceOnOneNodeAreOneHolder() {
    DatasetVersion version = version(1, 2);
    version.loaded(loaded(0, 0, A));
    version.loaded(loaded(0, 1, A));

    DatasetLayout.SliceRows slice = version.layout("events", "").slices().get(0);
    assertThat(slice.holders()).containsExactly(A);
  }
}
