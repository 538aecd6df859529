package io.floe.gateway.job;

import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.util.Preconditions;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;

/**
 * Copies chosen values of one column, drawn from several source batches, into a new vector by
 * addressing the buffers directly. A shuffled job part picks rows at random from a slice; what
 * costs is the per-value overhead of Arrow's {@code copyFrom} (type checks, bounds checks, capacity
 * checks and reallocations). Here the target is sized exactly once (for strings and binaries, from
 * the sum of the chosen values' lengths), a run of rows that sit next to each other in one source
 * batch is copied in one call (an ordered job's parts are nearly all one run), and a lone value is
 * one load and one store. Only flat fixed-width (not bit-packed) and 32-bit-offset variable-width
 * vectors are handled; {@link #handles} says which.
 *
 * <p>One instance serves one column of one slice: it keeps the buffer addresses of each source
 * batch, and whether it has nulls, from when the batch is first viewed (slices are immutable).
 */
final class ColumnGather {
  private final long[] sourceData;
  private final long[] sourceOffsets;
  private final long[] sourceValidity;
  private final boolean[] noNulls;
  private final int[] valueCounts;

  /** For a column of a slice of {@code batches} batches. */
  ColumnGather(int batches) {
    sourceData = new long[batches];
    sourceOffsets = new long[batches];
    sourceValidity = new long[batches];
    noNulls = new boolean[batches];
    valueCounts = new int[batches];
  }

  /** Whether {@link #gather} can fill {@code target}. */
  static boolean handles(FieldVector target) {
    return (target instanceof BaseFixedWidthVector && !(target instanceof BitVector))
        || target instanceof BaseVariableWidthVector;
  }

  /** Notes where batch {@code b}'s values of this column are; {@code source} is one it handles. */
  void add(int b, FieldVector source) {
    valueCounts[b] = source.getValueCount();
    noNulls[b] = source.getNullCount() == 0;
    sourceData[b] = source.getDataBuffer().memoryAddress();
    sourceValidity[b] = noNulls[b] ? 0 : source.getValidityBuffer().memoryAddress();
    if (source instanceof BaseVariableWidthVector) {
      sourceOffsets[b] = source.getOffsetBuffer().memoryAddress();
    }
  }

  /**
   * Fills {@code target} (new, unallocated) with {@code count} values: value {@code i} is batch
   * {@code batchOf[i]}'s value at {@code indexIn[i]}. Every batch referenced was {@link #add}ed.
   */
  void gather(FieldVector target, int[] batchOf, int[] indexIn, int count) {
    if (target instanceof BaseVariableWidthVector variable) {
      variableWidth(variable, batchOf, indexIn, count);
    } else {
      fixedWidth((BaseFixedWidthVector) target, batchOf, indexIn, count);
    }
    target.setValueCount(count);
  }

  /**
   * The length of the run of values starting at {@code i} that sit next to each other in one source
   * batch: an ordered job's parts are nearly all one run, and a shuffled job's have short ones.
   */
  private static int run(int[] batchOf, int[] indexIn, int i, int count) {
    int b = batchOf[i];
    int j = indexIn[i];
    int r = 1;
    while (i + r < count && batchOf[i + r] == b && indexIn[i + r] == j + r) {
      r++;
    }
    return r;
  }

  private void fixedWidth(BaseFixedWidthVector target, int[] batchOf, int[] indexIn, int count) {
    int width = target.getTypeWidth();
    target.allocateNew(Math.max(1, count));
    long data = target.getDataBuffer().memoryAddress();
    long validity = target.getValidityBuffer().memoryAddress();
    boolean anyNulls = anyNulls(batchOf, count);
    int i = 0;
    while (i < count) {
      int r = run(batchOf, indexIn, i, count);
      int b = batchOf[i];
      int j = indexIn[i];
      checked(b, j + r - 1);
      checked(b, j);
      // Nulls' slots are copied too: their contents do not matter, and one copy beats a test.
      long source = sourceData[b] + (long) j * width;
      long destination = data + (long) i * width;
      if (r > 1) {
        MemoryUtil.copyMemory(source, destination, (long) r * width);
      } else {
        switch (width) {
          case 8 -> MemoryUtil.putLong(destination, MemoryUtil.getLong(source));
          case 4 -> MemoryUtil.putInt(destination, MemoryUtil.getInt(source));
          case 2 -> MemoryUtil.putShort(destination, MemoryUtil.getShort(source));
          case 1 -> MemoryUtil.putByte(destination, MemoryUtil.getByte(source));
          default -> copySmall(source, destination, width);
        }
      }
      if (anyNulls) {
        copyValidity(b, j, validity, i, r);
      }
      i += r;
    }
    if (!anyNulls) {
      allValid(validity, count);
    }
  }

  /** Whether any source batch of these rows has a null in this column. */
  private boolean anyNulls(int[] batchOf, int count) {
    for (int i = 0; i < count; i++) {
      if (!noNulls[batchOf[i]]) {
        return true;
      }
    }
    return false;
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

  private void variableWidth(
      BaseVariableWidthVector target, int[] batchOf, int[] indexIn, int count) {
    int width = BaseVariableWidthVector.OFFSET_WIDTH;
    long bytes = 0;
    for (int i = 0; i < count; ) {
      int r = run(batchOf, indexIn, i, count);
      int b = batchOf[i];
      int j = indexIn[i];
      checked(b, j + r - 1);
      checked(b, j);
      // A null's length is 0 in a valid vector; a run's bytes are its end offset less its start.
      bytes += offset(b, j + r) - offset(b, j);
      i += r;
    }
    Preconditions.checkState(
        bytes <= Integer.MAX_VALUE, "A part of %s bytes does not fit 32-bit offsets", bytes);
    target.allocateNew(Math.max(1, bytes), Math.max(1, count));
    long data = target.getDataBuffer().memoryAddress();
    long offsets = target.getOffsetBuffer().memoryAddress();
    long validity = target.getValidityBuffer().memoryAddress();
    boolean anyNulls = anyNulls(batchOf, count);
    int end = 0;
    MemoryUtil.putInt(offsets, 0);
    int i = 0;
    while (i < count) {
      int r = run(batchOf, indexIn, i, count); // checked while sizing
      int b = batchOf[i];
      int j = indexIn[i];
      int start = offset(b, j);
      int length = offset(b, j + r) - start;
      if (r == 1) {
        copySmall(sourceData[b] + start, data + end, length);
        end += length;
        MemoryUtil.putInt(offsets + (long) (i + 1) * width, end);
      } else {
        MemoryUtil.copyMemory(sourceData[b] + start, data + end, length);
        // The run's offsets, moved from where the run starts in the source to where it lands.
        int shift = end - start;
        long sourceOffsets = this.sourceOffsets[b] + (long) (j + 1) * width;
        long targetOffsets = offsets + (long) (i + 1) * width;
        for (int t = 0; t < r; t++) {
          MemoryUtil.putInt(
              targetOffsets + (long) t * width,
              MemoryUtil.getInt(sourceOffsets + (long) t * width) + shift);
        }
        end += length;
      }
      if (anyNulls) {
        copyValidity(b, j, validity, i, r);
      }
      i += r;
    }
    if (!anyNulls) {
      allValid(validity, count);
    }
    // Every offset is written: without this, setValueCount would "fill holes" over them.
    target.setLastSet(count - 1);
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
    return MemoryUtil.getInt(sourceOffsets[b] + (long) j * BaseVariableWidthVector.OFFSET_WIDTH);
  }

  /** Row {@code j} of batch {@code b}, checked: the copies below read memory unchecked. */
  private int checked(int b, int j) {
    if (j < 0 || j >= valueCounts[b]) {
      throw new IndexOutOfBoundsException(
          "Row " + j + " is outside source batch " + b + " of " + valueCounts[b] + " rows");
    }
    return j;
  }

  private static void setBit(long validity, int i) {
    long at = validity + (i >> 3);
    MemoryUtil.putByte(at, (byte) (MemoryUtil.getByte(at) | (1 << (i & 7))));
  }

  private boolean isNull(int b, int j) {
    return !noNulls[b] && (MemoryUtil.getByte(sourceValidity[b] + (j >> 3)) & (1 << (j & 7))) == 0;
  }
}
