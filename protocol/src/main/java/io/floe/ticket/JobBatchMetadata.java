package io.floe.ticket;

import io.floe.util.Preconditions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The {@code app_metadata} of each record batch a job ticket's stream carries: which global batch
 * the rows belong to, and where they go in the rank's share of it. A rank's share of batch {@code
 * k} is in the epoch's order; a node sends the rows of it that it holds, in that order, so a reader
 * puts the parts of all nodes together by these places. Little-endian: the batch index (int64),
 * then the place of each row (int32), left out when the part is the rank's whole share (the rows
 * are then places 0, 1, …).
 *
 * @param batch the global batch index {@code k}
 * @param places where each row of the part goes in the rank's share, ascending; null for the whole
 *     share in order
 */
public record JobBatchMetadata(long batch, int[] places) {
  public JobBatchMetadata {
    Preconditions.checkArgument(batch >= 0, "Invalid batch index: %s", batch);
  }

  /** Whether the part is the rank's whole share of the batch, in order. */
  public boolean whole() {
    return places == null;
  }

  /** The encoded bytes, as they travel. */
  public byte[] encode() {
    int count = places == null ? 0 : places.length;
    ByteBuffer out = ByteBuffer.allocate(Long.BYTES + Integer.BYTES * count);
    out.order(ByteOrder.LITTLE_ENDIAN).putLong(batch);
    for (int i = 0; i < count; i++) {
      out.putInt(places[i]);
    }
    return out.array();
  }

  /**
   * @throws IllegalArgumentException when the bytes are not a job batch's metadata
   */
  public static JobBatchMetadata decode(ByteBuffer bytes) {
    ByteBuffer in = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    Preconditions.checkArgument(
        in.remaining() >= Long.BYTES && (in.remaining() - Long.BYTES) % Integer.BYTES == 0,
        "Invalid job batch metadata: %s bytes",
        in.remaining());
    long batch = in.getLong();
    if (!in.hasRemaining()) {
      return new JobBatchMetadata(batch, null);
    }
    int[] places = new int[in.remaining() / Integer.BYTES];
    for (int i = 0; i < places.length; i++) {
      places[i] = in.getInt();
    }
    return new JobBatchMetadata(batch, places);
  }
}
