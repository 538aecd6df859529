package io.floe.gateway.job;

import java.util.Arrays;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.util.Preconditions;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;

/**
 * Copies chosen values of one column, drawn from several source batches, into a new vector by
 * addressing the buffers directly, following a part's {@link GatherRuns}: Arrow's {@code copyFrom}
 * costs type, bounds and capacity checks per value. The target is sized exactly once (for strings
 * and binaries, from the sum of the chosen values' lengths), a run is one bulk copy, and a lone
 * value one load and one store. Only flat fixed-width (not bit-packed) and 32-bit-offset
 * variable-width vectors are handled; {@link #handles} says which.
 *
 * <p>One instance serves one column of a gather's source batches: it keeps each batch's buffer
 * addresses, and whether it has nulls, from when the batch is first viewed (slices are immutable).
 */
final class ColumnGather {
  private static final int OFFSET_WIDTH = BaseVariableWidthVector.OFFSET_WIDTH;

  private final long[] sourceData;
  private final long[] sourceOffsets;

  /** sourceDataEnd[b]: the end of batch b's data buffer, past which no word may be read. */
  private final long[] sourceDataEnd;

  private final long[] sourceValidity;
  private final boolean[] noNulls;

  /** For a column of {@code batches} source batches. */
  ColumnGather(int batches) {
    sourceData = new long[batches];
    sourceOffsets = new long[batches];
    sourceDataEnd = new long[batches];
    sourceValidity = new long[batches];
    noNulls = new boolean[batches];
  }

  /** Whether {@link #gather} can fill {@code target}. */
  static boolean handles(FieldVector target) {
    return (target instanceof BaseFixedWidthVector && !(target instanceof BitVector))
        || target instanceof BaseVariableWidthVector;
  }

  /** Notes where batch {@code b}'s values of this column are; {@code source} is one it handles. */
  void add(int b, FieldVector source) {
    noNulls[b] = source.getNullCount() == 0;
    sourceData[b] = source.getDataBuffer().memoryAddress();
    sourceDataEnd[b] = sourceData[b] + source.getDataBuffer().capacity();
    sourceValidity[b] = noNulls[b] ? 0 : source.getValidityBuffer().memoryAddress();
    if (source instanceof BaseVariableWidthVector) {
      sourceOffsets[b] = source.getOffsetBuffer().memoryAddress();
    }
  }

  /**
   * Fills {@code target} (new, unallocated) with the part's rows that {@code runs} lists. Every
   * batch they reference was {@link #add}ed, and the runs were checked against its rows.
   */
  void gather(FieldVector target, GatherRuns runs) {
    if (target instanceof BaseVariableWidthVector variable) {
      variableWidth(variable, runs);
    } else {
      fixedWidth((BaseFixedWidthVector) target, runs);
    }
    target.setValueCount(runs.rows());
  }

  private void fixedWidth(BaseFixedWidthVector target, GatherRuns runs) {
    int width = target.getTypeWidth();
    target.allocateNew(Math.max(1, runs.rows()));
    long data = target.getDataBuffer().memoryAddress();
    long validity = target.getValidityBuffer().memoryAddress();
    // One loop per width, so that a lone value (a shuffled part is nearly all of them) is one
    // load and one store; nulls' slots are copied too: one copy beats a test.
    switch (width) {
      case 8 -> copyFixed8(runs, data);
      case 4 -> copyFixed4(runs, data);
      default -> copyFixed(runs, data, width);
    }
    validity(runs, validity);
  }

  private void copyFixed8(GatherRuns runs, long data) {
    if (runs.runs() == runs.rows()) {
      int[] source = runs.sources();
      int[] from = runs.froms();
      int[] to = runs.tos();
      long[] sourceData = this.sourceData;
      for (int r = 0; r < source.length && r < runs.runs(); r++) {
        MemoryUtil.putLong(
            data + ((long) to[r] << 3),
            MemoryUtil.getLong(sourceData[source[r]] + ((long) from[r] << 3)));
      }
      return;
    }
    for (int r = 0; r < runs.runs(); r++) {
      long source = sourceData[runs.source(r)] + ((long) runs.from(r) << 3);
      long destination = data + ((long) runs.to(r) << 3);
      int n = runs.length(r);
      if (n == 1) {
        MemoryUtil.putLong(destination, MemoryUtil.getLong(source));
      } else {
        MemoryUtil.copyMemory(source, destination, (long) n << 3);
      }
    }
  }

  private void copyFixed4(GatherRuns runs, long data) {
    if (runs.lone()) {
      int[] source = runs.sources();
      int[] from = runs.froms();
      int[] to = runs.tos();
      for (int r = 0; r < runs.rows(); r++) {
        long at = sourceData[source[r]] + ((long) from[r] << 2);
        MemoryUtil.putInt(data + ((long) to[r] << 2), MemoryUtil.getInt(at));
      }
      return;
    }
    for (int r = 0; r < runs.runs(); r++) {
      long source = sourceData[runs.source(r)] + ((long) runs.from(r) << 2);
      long destination = data + ((long) runs.to(r) << 2);
      int n = runs.length(r);
      if (n == 1) {
        MemoryUtil.putInt(destination, MemoryUtil.getInt(source));
      } else {
        MemoryUtil.copyMemory(source, destination, (long) n << 2);
      }
    }
  }

  private void copyFixed(GatherRuns runs, long data, int width) {
    for (int r = 0; r < runs.runs(); r++) {
      long source = sourceData[runs.source(r)] + (long) runs.from(r) * width;
      long destination = data + (long) runs.to(r) * width;
      int n = runs.length(r);
      if (n == 1) {
        copySmall(source, destination, width);
      } else {
        MemoryUtil.copyMemory(source, destination, (long) n * width);
      }
    }
  }

  /** Sets the part's validity bits: all at once when no source batch of its runs has a null. */
  private void validity(GatherRuns runs, long validity) {
    boolean anyNulls = false;
    for (int r = 0; r < runs.runs() && !anyNulls; r++) {
      anyNulls = !noNulls[runs.source(r)];
    }
    if (!anyNulls) {
      allValid(validity, runs.rows());
      return;
    }
    for (int r = 0; r < runs.runs(); r++) {
      copyValidity(runs.source(r), runs.from(r), validity, runs.to(r), runs.length(r));
    }
  }

  /** Sets the first {@code count} validity bits (the buffer is zeroed when allocated). */
  private static void allValid(long validity, int count) {
    int bytes = count >> 3;
    MemoryUtil.setMemory(validity, bytes, (byte) 0xFF);
    if ((count & 7) != 0) {
      MemoryUtil.putByte(validity + bytes, (byte) ((1 << (count & 7)) - 1));
    }
  }

  /**
   * Copies a short value with word moves: a call into the runtime's copy costs more than the copy
   * itself for the few bytes of a string, decimal or fixed-size binary.
   */
  private static void copySmall(long source, long destination, int length) {
    if (length > 64) {
      MemoryUtil.copyMemory(source, destination, length);
      return;
    }
    int at = 0;
    for (; at + 8 <= length; at += 8) {
      MemoryUtil.putLong(destination + at, MemoryUtil.getLong(source + at));
    }
    if (at + 4 <= length) {
      MemoryUtil.putInt(destination + at, MemoryUtil.getInt(source + at));
      at += 4;
    }
    for (; at < length; at++) {
      MemoryUtil.putByte(destination + at, MemoryUtil.getByte(source + at));
    }
  }

  /**
   * Strings and binaries. A part of a few long runs (an ordered job's) copies each run's bytes in
   * one call and moves its offsets; a shuffled part, nearly all lone values, goes by {@link
   * #loneValues}.
   */
  private void variableWidth(BaseVariableWidthVector target, GatherRuns runs) {
    if (runs.lone() || (long) runs.runs() * 4 > runs.rows()) {
      loneValues(target, runs);
    } else {
      longRuns(target, runs);
    }
    validity(runs, target.getValidityBuffer().memoryAddress());
    // Every offset is written: without this, setValueCount would "fill holes" over them.
    target.setLastSet(runs.rows() - 1);
  }

  private void longRuns(BaseVariableWidthVector target, GatherRuns runs) {
    long bytes = 0;
    for (int r = 0; r < runs.runs(); r++) {
      int b = runs.source(r);
      bytes += offset(b, runs.from(r) + runs.length(r)) - offset(b, runs.from(r));
    }
    allocate(target, bytes, runs.rows());
    long data = target.getDataBuffer().memoryAddress();
    long offsets = target.getOffsetBuffer().memoryAddress();
    MemoryUtil.putInt(offsets, 0);
    // Runs are in the sources' order; where each lands needs the bytes of the runs before it in
    // the part, so the runs' lengths go to their places first.
    int[] runAt = runs.scratch().runAt(runs.rows());
    Arrays.fill(runAt, 0, runs.rows(), -1);
    for (int r = 0; r < runs.runs(); r++) {
      runAt[runs.to(r)] = r;
    }
    int end = 0;
    for (int i = 0; i < runs.rows(); ) {
      int r = runAt[i];
      int b = runs.source(r);
      int j = runs.from(r);
      int n = runs.length(r);
      int start = offset(b, j);
      int length = offset(b, j + n) - start;
      MemoryUtil.copyMemory(sourceData[b] + start, data + end, length);
      // The run's offsets, moved from where the run starts in the source to where it lands.
      int shift = end - start;
      long sourceOffsets = this.sourceOffsets[b] + (long) (j + 1) * OFFSET_WIDTH;
      long targetOffsets = offsets + (long) (i + 1) * OFFSET_WIDTH;
      for (int t = 0; t < n; t++) {
        MemoryUtil.putInt(
            targetOffsets + (long) t * OFFSET_WIDTH,
            MemoryUtil.getInt(sourceOffsets + (long) t * OFFSET_WIDTH) + shift);
      }
      end += length;
      i += n;
    }
  }

  /**
   * Two sweeps: the first, in the sources' order, notes where each value's bytes are and how long
   * they are; the second, in the part's order, writes the offsets and the bytes, a short value as a
   * fixed block of words where the source has room to read it (the block's surplus lands where the
   * next value's bytes go next, and past the end in the slack {@link #allocate} leaves).
   */
  private void loneValues(BaseVariableWidthVector target, GatherRuns runs) {
    int count = runs.rows();
    long[] address = runs.scratch().valueAddress(count);
    // A value whose words would read past its source buffer is marked by a negative length.
    int[] lengths = runs.scratch().valueLength(count);
    long bytes = 0;
    if (runs.lone()) {
      int[] source = runs.sources();
      int[] from = runs.froms();
      int[] to = runs.tos();
      for (int r = 0; r < count; r++) {
        int b = source[r];
        long offsets = sourceOffsets[b] + ((long) from[r] << 2);
        int start = MemoryUtil.getInt(offsets);
        int length = MemoryUtil.getInt(offsets + OFFSET_WIDTH) - start;
        long at = sourceData[b] + start;
        address[to[r]] = at;
        lengths[to[r]] = at + span(length) <= sourceDataEnd[b] ? length : -length;
        bytes += length;
      }
    }
    for (int r = 0; r < runs.runs() && !runs.lone(); r++) {
      int b = runs.source(r);
      int j = runs.from(r);
      int i = runs.to(r);
      long offsets = sourceOffsets[b] + (long) j * OFFSET_WIDTH;
      int previous = MemoryUtil.getInt(offsets);
      for (int t = 0; t < runs.length(r); t++) {
        int next = MemoryUtil.getInt(offsets + (long) (t + 1) * OFFSET_WIDTH);
        int length = next - previous; // a null's length is 0 in a valid vector
        long at = sourceData[b] + previous;
        address[i + t] = at;
        lengths[i + t] = at + span(length) <= sourceDataEnd[b] ? length : -length;
        bytes += length;
        previous = next;
      }
    }
    allocate(target, bytes, count);
    long data = target.getDataBuffer().memoryAddress();
    long offsets = target.getOffsetBuffer().memoryAddress();
    MemoryUtil.putInt(offsets, 0);
    int end = 0;
    for (int i = 0; i < count; i++) {
      int length = lengths[i];
      long source = address[i];
      long destination = data + end;
      // Fixed blocks of words rather than a loop over the length: a shuffled column's lengths
      // vary from value to value, and a loop's exit would be mispredicted nearly every time.
      if (length >= 0 && length <= 16) {
        MemoryUtil.putLong(destination, MemoryUtil.getLong(source));
        MemoryUtil.putLong(destination + 8, MemoryUtil.getLong(source + 8));
      } else if (length >= 0 && length <= 32) {
        MemoryUtil.putLong(destination, MemoryUtil.getLong(source));
        MemoryUtil.putLong(destination + 8, MemoryUtil.getLong(source + 8));
        MemoryUtil.putLong(destination + 16, MemoryUtil.getLong(source + 16));
        MemoryUtil.putLong(destination + 24, MemoryUtil.getLong(source + 24));
      } else {
        length = Math.abs(length);
        copySmall(source, destination, length);
      }
      end += length;
      MemoryUtil.putInt(offsets + (long) (i + 1) * OFFSET_WIDTH, end);
    }
  }

  /** The bytes a copy of a value of {@code length} bytes reads and writes: 16, 32 or exact. */
  private static long span(int length) {
    return length <= 16 ? 16 : length <= 32 ? 32 : length;
  }

  /** Room for {@code bytes} bytes and slack for the last value's surplus (see {@link #span}). */
  private static void allocate(BaseVariableWidthVector target, long bytes, int count) {
    Preconditions.checkState(
        bytes <= Integer.MAX_VALUE - 32, "A part of %s bytes does not fit 32-bit offsets", bytes);
    target.allocateNew(bytes + 32, Math.max(1, count));
  }

  /** Sets the validity bits of targets {@code i .. i + r − 1} from batch {@code b}'s rows at j. */
  private void copyValidity(int b, int j, long validity, int i, int r) {
    for (int t = 0; t < r; t++) {
      if (!isNull(b, j + t)) {
        setBit(validity, i + t);
      }
    }
  }

  /** The offset at position {@code j} (0 ≤ j ≤ rows) of batch {@code b}'s variable-width column. */
  private int offset(int b, int j) {
    return MemoryUtil.getInt(sourceOffsets[b] + (long) j * OFFSET_WIDTH);
  }

  private static void setBit(long validity, int i) {
    long at = validity + (i >> 3);
    MemoryUtil.putByte(at, (byte) (MemoryUtil.getByte(at) | (1 << (i & 7))));
  }

  private boolean isNull(int b, int j) {
    return !noNulls[b] && (MemoryUtil.getByte(sourceValidity[b] + (j >> 3)) & (1 << (j & 7))) == 0;
  }
}
