package io.floe.ticket;

import io.floe.util.Preconditions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The {@code app_metadata} of each record batch a job ticket's stream carries: which global batches
 * its rows belong to, and where they go in the rank's share of each. A rank's share of batch {@code
 * k} is in the epoch's order; a node sends the rows of it that it holds, in that order, so a reader
 * puts the parts of all nodes together by these places. A record batch carries the rows of one
 * global batch, or of several consecutive listed ones (one after the other) when the read asked for
 * {@code batches_per_message} above 1.
 *
 * <p>Little-endian. One batch: its index (int64), then the place of each row (int32), left out when
 * the part is the rank's whole share (the rows are then places 0, 1, …). Several: {@code −n}
 * (int64; negative, so it is never read as a batch index), the {@code n} batch indices (int64
 * each), the rows of each (int32 each), then the place of every row in its batch's share (int32
 * each), left out when every part is its batch's whole share.
 *
 * @param batches the global batch indices, ascending
 * @param rows the rows of each batch in the record batch, in the order of {@code batches}
 * @param places where each row of the record batch goes in its batch's share; null when each part
 *     is its batch's whole share in order
 */
public record JobBatchMetadata(long[] batches, int[] rows, int[] places) {
  public JobBatchMetadata {
    Preconditions.checkArgument(
        batches.length > 0 && batches.length == rows.length,
        "Invalid job batch metadata: %s batch indices and %s row counts",
        batches.length,
        rows.length);
    long total = 0;
    for (int i = 0; i < batches.length; i++) {
      Preconditions.checkArgument(batches[i] >= 0, "Invalid batch index: %s", batches[i]);
      Preconditions.checkArgument(
          i == 0 || batches[i] > batches[i - 1],
          "Invalid job batch metadata: batch %s after batch %s",
          batches[i],
          i == 0 ? -1 : batches[i - 1]);
      Preconditions.checkArgument(
          rows[i] >= 0, "Invalid job batch metadata: %s rows of batch %s", rows[i], batches[i]);
      total += rows[i];
    }
    Preconditions.checkArgument(
        places == null || places.length == total,
        "Invalid job batch metadata: %s places for %s rows",
        places == null ? 0 : places.length,
        total);
  }

  /** One batch's part of {@code rows} rows; {@code places} null for the whole share in order. */
  public static JobBatchMetadata of(long batch, int rows, int[] places) {
    return new JobBatchMetadata(new long[] {batch}, new int[] {rows}, places);
  }

  /** The global batches the record batch carries rows of. */
  public int batchCount() {
    return batches.length;
  }

  /** The {@code i}-th global batch's index. */
  public long batch(int i) {
    return batches[i];
  }

  /** The rows of the {@code i}-th batch: they follow those of the batches before it. */
  public int rows(int i) {
    return rows[i];
  }

  /** The rows of all the batches: the record batch's row count. */
  public long totalRows() {
    long total = 0;
    for (int r : rows) {
      total += r;
    }
    return total;
  }

  /** Where the {@code i}-th batch's rows go in its share; null for the whole share in order. */
  public int[] places(int i) {
    if (places == null) {
      return null;
    }
    int from = 0;
    for (int b = 0; b < i; b++) {
      from += rows[b];
    }
    return Arrays.copyOfRange(places, from, from + rows[i]);
  }

  /** The encoded bytes, as they travel. */
  public byte[] encode() {
    int count = places == null ? 0 : places.length;
    int n = batches.length;
    ByteBuffer out =
        ByteBuffer.allocate(
                n == 1
                    ? Long.BYTES + Integer.BYTES * count
                    : Long.BYTES * (1 + n) + Integer.BYTES * (n + count))
            .order(ByteOrder.LITTLE_ENDIAN);
    if (n == 1) {
      out.putLong(batches[0]);
    } else {
      out.putLong(-n);
      for (long batch : batches) {
        out.putLong(batch);
      }
      for (int r : rows) {
        out.putInt(r);
      }
    }
    for (int i = 0; i < count; i++) {
      out.putInt(places[i]);
    }
    return out.array();
  }

  /**
   * The metadata of a record batch of {@code messageRows} rows.
   *
   * @throws IllegalArgumentException when the bytes are not a job batch's metadata, or do not
   *     account for exactly the record batch's rows
   */
  public static JobBatchMetadata decode(ByteBuffer bytes, int messageRows) {
    ByteBuffer in = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int size = in.remaining();
    Preconditions.checkArgument(
        size >= Long.BYTES && size % Integer.BYTES == 0,
        "Invalid job batch metadata: %s bytes",
        size);
    long first = in.getLong();
    JobBatchMetadata read;
    if (first >= 0) {
      read = of(first, messageRows, in.hasRemaining() ? ints(in, in.remaining() / 4) : null);
    } else {
      Preconditions.checkArgument(
          -first <= (size - Long.BYTES) / (Long.BYTES + Integer.BYTES),
          "Invalid job batch metadata: %s batches in %s bytes",
          -first,
          size);
      int n = (int) -first;
      long[] batches = new long[n];
      for (int i = 0; i < n; i++) {
        batches[i] = in.getLong();
      }
      int[] rows = ints(in, n);
      read =
          new JobBatchMetadata(
              batches, rows, in.hasRemaining() ? ints(in, in.remaining() / 4) : null);
    }
    Preconditions.checkArgument(
        read.totalRows() == messageRows,
        "Invalid job batch metadata: it accounts for %s rows of a record batch of %s",
        read.totalRows(),
        messageRows);
    return read;
  }

  private static int[] ints(ByteBuffer in, int count) {
    int[] values = new int[count];
    for (int i = 0; i < count; i++) {
      values[i] = in.getInt();
    }
    return values;
  }
}
