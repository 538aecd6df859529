package io.floe.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class EpochShapeTest {
  @Test
  void dropKeepsFullBatchesOnly() {
    EpochShape shape = new EpochShape(1000, 96, TailPolicy.DROP);
    assertThat(shape.batches()).isEqualTo(10);
    assertThat(shape.rankStart(9, 4, 3)).isEqualTo(9 * 96 + 3 * 24);
  }

  @Test
  void padFillsTheLastBatchFromTheStartOfTheEpoch() {
    EpochShape shape = new EpochShape(1000, 96, TailPolicy.PAD);
    assertThat(shape.batches()).isEqualTo(11);
    assertThat(shape.position(999)).isEqualTo(999);
    assertThat(shape.position(1000)).isEqualTo(0);
    assertThat(shape.position(1055)).isEqualTo(55);
    // A batch larger than the dataset wraps more than once.
    assertThat(new EpochShape(10, 25, TailPolicy.PAD).position(24)).isEqualTo(4);
  }

  @Test
  void aWorldSizeMustDivideTheGlobalBatch() {
    EpochShape shape = new EpochShape(1000, 96, TailPolicy.DROP);
    assertThatThrownBy(() -> shape.rankRows(5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Invalid world_size 5")
        .hasMessageContaining("batch_rows 96");
    assertThatThrownBy(() -> shape.rankStart(0, 4, 4)).hasMessageContaining("Invalid rank 4");
    assertThatThrownBy(() -> shape.rankStart(10, 4, 0)).hasMessageContaining("Invalid batch 10");
  }
}
