package io.floe.job;

import io.floe.serialization.CborSerializable;
import io.floe.spec.DatasetSpec;
import io.floe.util.Excerpt;
import io.floe.util.Preconditions;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A training job's reading settings, as registered: which dataset, its columns, the seed and shape
 * of its per-epoch order, its global batch size and tail policy, and its mode. Immutable; two
 * registrations of one job id agree when their specs are equal.
 *
 * @param columns the dataset columns the job reads, in this order; empty means all
 * @param batchRows rows of one global batch (all ranks' batch k together), or of one lease
 * @param runRows the rows a window shuffles as one unit (see {@link EpochOrder})
 * @param pinLayout read every epoch from the layout the job was registered on; otherwise each epoch
 *     is read from the dataset's newest layout when the epoch begins (after a refresh)
 */
public record JobSpec(
    String job,
    String dataset,
    long seed,
    boolean shuffle,
    JobMode mode,
    List<String> columns,
    int batchRows,
    TailPolicy tail,
    int blockRows,
    int windowBlocks,
    int runRows,
    long leaseTimeoutMillis,
    boolean pinLayout)
    implements CborSerializable {
  public static final int BLOCK_ROWS_DEFAULT = 4096;
  public static final int WINDOW_BLOCKS_DEFAULT = 16;
  public static final int RUN_ROWS_DEFAULT = 1;
  public static final long LEASE_TIMEOUT_MILLIS_DEFAULT = 30_000;
  public static final int MAX_BATCH_ROWS = 1 << 20;
  public static final int MAX_WINDOW_BLOCKS = 4096;

  /** A window's row permutation is held as an int array: keep it modest. */
  public static final long MAX_WINDOW_ROWS = 1L << 24;

  /** Blocks an epoch may have: its order holds about 24 bytes a block. */
  public static final long MAX_BLOCKS = 1L << 22;

  public static final long MIN_LEASE_TIMEOUT_MILLIS = 100;
  public static final long MAX_LEASE_TIMEOUT_MILLIS = 86_400_000;
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]{1,128}");

  /**
   * Checks a job id as every request that names one must: 1-128 of letters, digits, '.', '_', '-'.
   *
   * @throws IllegalArgumentException quoting (a prefix of) the id
   */
  public static String checkId(String job) {
    Preconditions.checkArgument(
        job != null && ID.matcher(job).matches(),
        "Invalid job id '%s': use 1-128 of letters, digits, '.', '_', '-'",
        Excerpt.of(job));
    return job;
  }

  public JobSpec {
    checkId(job);
    DatasetSpec.checkName(dataset);
    Preconditions.checkArgument(mode != null, "Invalid job '%s': missing mode", job);
    Preconditions.checkArgument(tail != null, "Invalid job '%s': missing tail", job);
    columns = List.copyOf(columns);
    Preconditions.checkArgument(
        columns.stream().distinct().count() == columns.size(),
        "Invalid columns %s: a column is listed twice",
        Excerpt.of(columns));
    checkRange("batch_rows", batchRows, 1, MAX_BATCH_ROWS);
    checkRange("block_rows", blockRows, 1, MAX_BATCH_ROWS);
    checkRange("window_blocks", windowBlocks, 1, MAX_WINDOW_BLOCKS);
    // A job recorded before runs existed reads as 0: its order mixed single rows.
    if (runRows == 0) {
      runRows = 1;
    }
    checkRange("run_rows", runRows, 1, blockRows);
    Preconditions.checkArgument(
        (long) blockRows * windowBlocks <= MAX_WINDOW_ROWS,
        "Invalid window: block_rows × window_blocks = %s exceeds %s rows",
        (long) blockRows * windowBlocks,
        MAX_WINDOW_ROWS);
    checkRange(
        "lease_timeout_ms", leaseTimeoutMillis, MIN_LEASE_TIMEOUT_MILLIS, MAX_LEASE_TIMEOUT_MILLIS);
  }

  private static void checkRange(String field, long value, long min, long max) {
    Preconditions.checkArgument(
        min <= value && value <= max, "Invalid %s: %s (must be in %s..%s)", field, value, min, max);
  }

  /** The settings that fix an epoch's order of rows. */
  public OrderSettings order() {
    return new OrderSettings(seed, shuffle, blockRows, windowBlocks, runRows);
  }
}
