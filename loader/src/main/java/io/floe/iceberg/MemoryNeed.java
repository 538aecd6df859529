package io.floe.iceberg;

import java.util.function.Predicate;

/**
 * The Arrow memory a load needs on the data nodes, from its plan: what its slices hold once loaded,
 * and what its slices take on top while they decode.
 *
 * <p>A slice decoding holds its rows more than once ({@link SliceLoader}): the decoded batches
 * (vectors grown by doubling, small buffers rounded to a power of two), the same rows joined to the
 * batch size, and the packed copy it keeps, each stage freed only once the next is built; and while
 * it decodes, the reader's vectors for one whole batch. Measured above a slice's final size
 * (SliceLoadPeakTest): 1.9 times it with the generic reader, 1.3 times with the vectorized reader,
 * almost nothing with the native reader on files of large row groups, up to 2.9 times where row
 * groups are far smaller than the batch size (their batches are joined), plus the batch's vectors.
 * So a load needs
 *
 * <pre>
 * bytes + slicesAtOnce × copies × (3 × sliceBytes + batchBytes)
 * </pre>
 *
 * @param bytes what the slices hold once loaded, every copy: the least their columns take ({@link
 *     ScanPlan.MemoryFloor}: fixed-size values, validity and offsets; strings' bytes are not
 *     counted), 0 when the plan cannot bound it (a row filter)
 * @param rows the rows {@code bytes} counts
 * @param slicesAtOnce slices of the load decoding at once: {@code floe.load.per-dataset}, at most
 *     its slices and the data nodes' load threads; admission may lower it to what fits, at least 1
 * @param copies copies of each slice (a dataset's replicas), each loaded, and decoded, on its own
 * @param sliceBytes the largest slice's share of one copy's bytes (by its Parquet bytes)
 * @param batchBytes one batch of rows at {@code bytes / rows} a row
 */
public record MemoryNeed(
    long bytes, long rows, int slicesAtOnce, int copies, long sliceBytes, long batchBytes) {
  /** How many times its final size a slice decoding holds at most beside what it keeps. */
  public static final int DECODING_COPIES = 3;

  public static final MemoryNeed NONE = new MemoryNeed(0, 0, 0, 1, 0, 0);

  /**
   * What {@code plan} needs with {@code slicesAtOnce} slices decoding at once (capped at the plan's
   * slices).
   */
  public static MemoryNeed of(ScanPlan plan, int slicesAtOnce) {
    return of(plan, slicesAtOnce, slice -> true);
  }

  /**
   * What loading the slices of {@code plan} that {@code loads} picks needs (a refresh loads only
   * its new slices): their share of the plan's floor, by Parquet bytes, with {@code slicesAtOnce}
   * of them decoding at once (capped at their number).
   */
  public static MemoryNeed of(ScanPlan plan, int slicesAtOnce, Predicate<SliceSpec> loads) {
    long floor = plan.memoryFloor().bytes();
    long rows = plan.memoryFloor().rows();
    if (floor <= 0 || rows <= 0 || plan.slices().isEmpty()) {
      return NONE;
    }
    long parquet = 0;
    long loading = 0;
    long largest = 0;
    int batchRows = 0;
    int count = 0;
    for (SliceSpec slice : plan.slices()) {
      parquet += slice.estimatedBytes();
      if (loads.test(slice)) {
        loading += slice.estimatedBytes();
        largest = Math.max(largest, slice.estimatedBytes());
        batchRows = Math.max(batchRows, slice.batchRows());
        count++;
      }
    }
    if (count == 0) {
      return NONE;
    }
    boolean all = count == plan.slices().size();
    double share =
        all ? 1 : parquet <= 0 ? (double) count / plan.slices().size() : (double) loading / parquet;
    long bytes = all ? floor : (long) Math.ceil(floor * share);
    long loadRows = all ? rows : (long) Math.ceil(rows * share);
    long sliceBytes =
        parquet <= 0
            ? ceilDiv(floor, plan.slices().size())
            : (long) Math.ceil(floor * ((double) largest / parquet));
    long batchBytes = (long) Math.ceil((double) floor / rows * Math.min(batchRows, rows));
    return new MemoryNeed(
        bytes, loadRows, Math.max(1, Math.min(slicesAtOnce, count)), 1, sliceBytes, batchBytes);
  }

  /** The same load with {@code slices} decoding at once. */
  public MemoryNeed withSlicesAtOnce(int slices) {
    return new MemoryNeed(bytes, rows, slices, copies, sliceBytes, batchBytes);
  }

  /** The same load with {@code replicas} copies of each slice, each held and decoded. */
  public MemoryNeed times(int replicas) {
    return new MemoryNeed(
        bytes * replicas, rows, slicesAtOnce, copies * replicas, sliceBytes, batchBytes);
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  /** What one copy of a slice decoding takes beyond what it keeps. */
  public long perSliceDecoding() {
    return DECODING_COPIES * sliceBytes + batchBytes;
  }

  /** What the slices decoding at once take beyond what they keep. */
  public long transientBytes() {
    return (long) slicesAtOnce * copies * perSliceDecoding();
  }

  /** All the load needs free when it starts. */
  public long total() {
    return bytes + transientBytes();
  }
}
