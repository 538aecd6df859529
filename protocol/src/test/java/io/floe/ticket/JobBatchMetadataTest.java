package io.floe.ticket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** A job batch's metadata reads back as written, in the documented little-endian layout. */
class JobBatchMetadataTest {
  @Test
  void aWholeShareIsTheBatchIndexAlone() {
    byte[] bytes = JobBatchMetadata.of(5, 3, null).encode();
    assertThat(bytes).containsExactly(5, 0, 0, 0, 0, 0, 0, 0);
    JobBatchMetadata read = JobBatchMetadata.decode(ByteBuffer.wrap(bytes), 3);
    assertThat(read.batchCount()).isEqualTo(1);
    assertThat(read.batch(0)).isEqualTo(5);
    assertThat(read.rows(0)).isEqualTo(3);
    assertThat(read.places(0)).isNull();
  }

  @Test
  void aPartCarriesThePlacesOfItsRows() {
    byte[] bytes = JobBatchMetadata.of(1L << 33, 3, new int[] {0, 2, 70_000}).encode();
    assertThat(bytes).hasSize(8 + 3 * 4);
    JobBatchMetadata read = JobBatchMetadata.decode(ByteBuffer.wrap(bytes), 3);
    assertThat(read.batch(0)).isEqualTo(1L << 33);
    assertThat(read.places(0)).containsExactly(0, 2, 70_000);
  }

  @Test
  void severalBatchesAreCountedNegativeThenListedWithTheirRows() {
    byte[] bytes =
        new JobBatchMetadata(new long[] {4, 6}, new int[] {2, 3}, new int[] {0, 1, 1, 4, 0})
            .encode();
    ByteBuffer expected = ByteBuffer.allocate(8 + 16 + 8 + 20).order(ByteOrder.LITTLE_ENDIAN);
    expected.putLong(-2).putLong(4).putLong(6).putInt(2).putInt(3);
    for (int place : new int[] {0, 1, 1, 4, 0}) {
      expected.putInt(place);
    }
    assertThat(bytes).containsExactly(expected.array());

    JobBatchMetadata read = JobBatchMetadata.decode(ByteBuffer.wrap(bytes), 5);
    assertThat(read.batchCount()).isEqualTo(2);
    assertThat(read.batch(1)).isEqualTo(6);
    assertThat(read.rows(1)).isEqualTo(3);
    assertThat(read.places(0)).containsExactly(0, 1);
    assertThat(read.places(1)).containsExactly(1, 4, 0);
  }

  @Test
  void severalWholeSharesCarryNoPlaces() {
    byte[] bytes = new JobBatchMetadata(new long[] {0, 1, 2}, new int[] {4, 4, 4}, null).encode();
    assertThat(bytes).hasSize(8 + 3 * 8 + 3 * 4);
    JobBatchMetadata read = JobBatchMetadata.decode(ByteBuffer.wrap(bytes), 12);
    assertThat(read.totalRows()).isEqualTo(12);
    assertThat(read.places(2)).isNull();
  }

  @Test
  void bytesOfAnotherShapeAreRefused() {
    assertThatThrownBy(() -> JobBatchMetadata.decode(ByteBuffer.wrap(new byte[6]), 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("6 bytes");
    assertThatThrownBy(() -> JobBatchMetadata.decode(ByteBuffer.wrap(new byte[10]), 1))
        .hasMessageContaining("10 bytes");
  }

  @Test
  void metadataThatDoesNotAccountForTheRecordBatchsRowsIsRefused() {
    byte[] places = JobBatchMetadata.of(1, 2, new int[] {1, 0}).encode();
    assertThatThrownBy(() -> JobBatchMetadata.decode(ByteBuffer.wrap(places), 3))
        .hasMessageContaining("2 places for 3 rows");
    byte[] group = new JobBatchMetadata(new long[] {0, 1}, new int[] {4, 4}, null).encode();
    assertThatThrownBy(() -> JobBatchMetadata.decode(ByteBuffer.wrap(group), 9))
        .hasMessageContaining("accounts for 8 rows of a record batch of 9");
    ByteBuffer tooMany = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
    tooMany.putLong(-1_000_000).putLong(0);
    assertThatThrownBy(() -> JobBatchMetadata.decode(ByteBuffer.wrap(tooMany.array()), 1))
        .hasMessageContaining("1000000 batches in 16 bytes");
    ByteBuffer descending = ByteBuffer.allocate(8 + 16 + 8).order(ByteOrder.LITTLE_ENDIAN);
    descending.putLong(-2).putLong(5).putLong(3).putInt(1).putInt(1);
    assertThatThrownBy(() -> JobBatchMetadata.decode(ByteBuffer.wrap(descending.array()), 2))
        .hasMessageContaining("batch 3 after batch 5");
  }
}
