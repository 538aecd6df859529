package io.floe.gateway.job;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Working arrays given back are taken again for the same room, and no more than kept are kept. */
class GatherStagingsTest {
  @Test
  void arraysGivenBackAreTakenAgainForTheSameRoomAndAtMostKeepAreKept() {
    GatherStagings stagings = new GatherStagings(2);
    GatherStagings.Staging a = stagings.take(4096);
    GatherStagings.Staging b = stagings.take(4096);
    GatherStagings.Staging c = stagings.take(4096);
    assertThat(a.source).hasSize(4096);
    stagings.give(a);
    stagings.give(b);
    stagings.give(c); // a third is left to the collector
    assertThat(stagings.kept()).isEqualTo(2);

    assertThat(stagings.take(8192)).isNotIn(a, b, c); // another room: new arrays
    assertThat(stagings.take(4096)).isIn(a, b);
    assertThat(stagings.take(4096)).isIn(a, b);
    assertThat(stagings.kept()).isZero();
    assertThat(stagings.take(4096)).isNotIn(a, b, c);
  }
}
