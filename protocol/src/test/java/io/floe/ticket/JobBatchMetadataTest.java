package io.floe.ticket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** A job batch's metadata reads back as written, in the documented little-endian layout. */
class JobBatchMetadataTest {
  @Test
  void aWholeShareIsTheBatchIndexAlone() {
    byte[] bytes = new JobBatchMetadata(5, null).encode();
    assertThat(bytes).containsExactly(5, 0, 0, 0, 0, 0, 0, 0);
    JobBatchMetadata read = JobBatchMetadata.decode(ByteBuffer.wrap(bytes));
    assertThat(read.batch()).isEqualTo(5);
    assertThat(read.whole()).isTrue();
  }

  @Test
  void aPartCarriesThePlacesOfItsRows() {
    byte[] bytes = new JobBatchMetadata(1L << 33, new int[] {0, 2, 70_000}).encode();
    assertThat(bytes).hasSize(8 + 3 * 4);
    JobBatchMetadata read = JobBatchMetadata.decode(ByteBuffer.wrap(bytes));
    assertThat(read.batch()).isEqualTo(1L << 33);
    assertThat(read.places()).containsExactly(0, 2, 70_000);
  }

  @Test
  void bytesOfAnotherShapeAreRefused() {
    assertThatThrownBy(() -> JobBatchMetadata.decode(ByteBuffer.wrap(new byte[6])))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("6 bytes");
    assertThatThrownBy(() -> JobBatchMetadata.decode(ByteBuffer.wrap(new byte[10])))
        .hasMessageContaining("10 bytes");
  }
}
