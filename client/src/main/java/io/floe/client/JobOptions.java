package io.floe.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.TailPolicy;
import io.floe.protocol.JobRequest;
import io.floe.protocol.Json;
import io.floe.spec.DatasetSpec;
import io.floe.util.Preconditions;
import java.util.List;
import java.util.Objects;

/**
 * A training job's settings as {@code register_job} takes them (docs/protocol.md, "Training jobs"):
 * which dataset, the rows of one global batch, and how each epoch is ordered. Immutable; build one
 * with {@link #builder} and refine a copy with {@link #toBuilder}.
 *
 * <p>Optional settings left unset are left out of the JSON, so the server applies its defaults; the
 * accessors answer those defaults. Two options naming the same settings, one explicitly and one by
 * default, describe the same job to the server but are not {@link #equals} here.
 */
public final class JobOptions {
  // The server's own limits and defaults (io.floe.job.JobSpec), one copy for both sides.
  public static final int BATCH_ROWS_MAX = JobSpec.MAX_BATCH_ROWS;
  public static final long SEED_DEFAULT = 0;
  public static final int BLOCK_ROWS_DEFAULT = JobSpec.BLOCK_ROWS_DEFAULT;
  public static final int BLOCK_ROWS_MAX = JobSpec.MAX_BATCH_ROWS;
  public static final int WINDOW_BLOCKS_DEFAULT = JobSpec.WINDOW_BLOCKS_DEFAULT;
  public static final int WINDOW_BLOCKS_MAX = JobSpec.MAX_WINDOW_BLOCKS;
  public static final int RUN_ROWS_DEFAULT = JobSpec.RUN_ROWS_DEFAULT;
  public static final long LEASE_TIMEOUT_MS_DEFAULT = JobSpec.LEASE_TIMEOUT_MILLIS_DEFAULT;
  public static final long LEASE_TIMEOUT_MS_MIN = JobSpec.MIN_LEASE_TIMEOUT_MILLIS;
  public static final long LEASE_TIMEOUT_MS_MAX = JobSpec.MAX_LEASE_TIMEOUT_MILLIS;

  private final String job;
  private final String dataset;
  private final int batchRows;
  private final Long seed;
  private final Boolean shuffle;
  private final JobMode mode;
  private final List<String> columns;
  private final TailPolicy tail;
  private final Integer blockRows;
  private final Integer windowBlocks;
  private final Integer runRows;
  private final Long leaseTimeoutMs;
  private final Boolean pinLayout;

  private JobOptions(Builder builder) {
    this.job = builder.job;
    this.dataset = builder.dataset;
    this.batchRows = builder.batchRows;
    this.seed = builder.seed;
    this.shuffle = builder.shuffle;
    this.mode = builder.mode;
    this.columns = builder.columns;
    this.tail = builder.tail;
    this.blockRows = builder.blockRows;
    this.windowBlocks = builder.windowBlocks;
    this.runRows = builder.runRows;
    this.leaseTimeoutMs = builder.leaseTimeoutMs;
    this.pinLayout = builder.pinLayout;
  }

  /**
   * Starts options for job {@code job} over dataset {@code dataset} with global batches of {@code
   * batchRows} rows.
   */
  public static Builder builder(String job, String dataset, int batchRows) {
    return new Builder(job, dataset, batchRows);
  }

  /** A builder holding these settings, to derive other options from. */
  public Builder toBuilder() {
    Builder builder = new Builder(job, dataset, batchRows);
    builder.seed = seed;
    builder.shuffle = shuffle;
    builder.mode = mode;
    builder.columns = columns;
    builder.tail = tail;
    builder.blockRows = blockRows;
    builder.windowBlocks = windowBlocks;
    builder.runRows = runRows;
    builder.leaseTimeoutMs = leaseTimeoutMs;
    builder.pinLayout = pinLayout;
    return builder;
  }

  public String job() {
    return job;
  }

  public String dataset() {
    return dataset;
  }

  /** Rows of one global batch: every rank's batch {@code k} together, or one lease. */
  public int batchRows() {
    return batchRows;
  }

  public long seed() {
    return seed == null ? SEED_DEFAULT : seed;
  }

  /** Whether epochs are shuffled; off means every epoch is the dataset's global row order. */
  public boolean shuffled() {
    return shuffle == null || shuffle;
  }

  public JobMode mode() {
    return mode == null ? JobMode.DETERMINISTIC : mode;
  }

  /** The columns asked for, in order; empty for all of the dataset's columns. */
  public List<String> columns() {
    return columns == null ? List.of() : columns;
  }

  public TailPolicy tail() {
    return tail == null ? TailPolicy.DROP : tail;
  }

  public int blockRows() {
    return blockRows == null ? BLOCK_ROWS_DEFAULT : blockRows;
  }

  public int windowBlocks() {
    return windowBlocks == null ? WINDOW_BLOCKS_DEFAULT : windowBlocks;
  }

  /** Rows a window shuffles as one unit: 1 mixes single rows. */
  public int runRows() {
    return runRows == null ? RUN_ROWS_DEFAULT : runRows;
  }

  public long leaseTimeoutMs() {
    return leaseTimeoutMs == null ? LEASE_TIMEOUT_MS_DEFAULT : leaseTimeoutMs;
  }

  /**
   * Whether every epoch reads the layout the job was registered on; otherwise (the default) each
   * epoch reads the dataset's newest layout when it begins.
   */
  public boolean pinsLayout() {
    return pinLayout != null && pinLayout;
  }

  /** The {@code register_job} body: required fields and the optional ones that were set. */
  public JobRequest.Body body() {
    return new JobRequest.Body(
        job,
        dataset,
        batchRows,
        seed,
        shuffle,
        mode,
        columns,
        tail,
        blockRows,
        windowBlocks,
        runRows,
        leaseTimeoutMs,
        pinLayout);
  }

  public ObjectNode json() {
    return body().json();
  }

  public byte[] toJson() {
    return body().toJson();
  }

  @Override
  public boolean equals(Object other) {
    if (this == other) {
      return true;
    }
    if (!(other instanceof JobOptions)) {
      return false;
    }
    // Options are their register_job body: equal when they would send the same request.
    return body().equals(((JobOptions) other).body());
  }

  @Override
  public int hashCode() {
    return body().hashCode();
  }

  @Override
  public String toString() {
    return "JobOptions" + Json.string(json());
  }

  /** Collects a job's settings; {@link #build} checks nothing is out of range. */
  public static final class Builder {
    private final String job;
    private final String dataset;
    private final int batchRows;
    private Long seed;
    private Boolean shuffle;
    private JobMode mode;
    private List<String> columns;
    private TailPolicy tail;
    private Integer blockRows;
    private Integer windowBlocks;
    private Integer runRows;
    private Long leaseTimeoutMs;
    private Boolean pinLayout;

    private Builder(String job, String dataset, int batchRows) {
      // The same checks the node makes when it reads the request.
      JobSpec.checkId(job);
      DatasetSpec.checkName(dataset);
      Preconditions.checkArgument(
          batchRows >= 1 && batchRows <= BATCH_ROWS_MAX,
          "Invalid batch_rows: %s (must be in 1..%s)",
          batchRows,
          BATCH_ROWS_MAX);
      this.job = job;
      this.dataset = dataset;
      this.batchRows = batchRows;
    }

    public Builder seed(long newSeed) {
      this.seed = newSeed;
      return this;
    }

    /** Shuffles blocks, and rows within windows of blocks, differently every epoch (default). */
    public Builder shuffle() {
      this.shuffle = true;
      return this;
    }

    /** Reads every epoch in the dataset's global row order. */
    public Builder globalOrder() {
      this.shuffle = false;
      return this;
    }

    public Builder mode(JobMode newMode) {
      this.mode = Objects.requireNonNull(newMode, "mode");
      return this;
    }

    /** Serves these columns in this order; an empty list is refused (leave unset for all). */
    public Builder columns(List<String> newColumns) {
      Preconditions.checkArgument(
          newColumns != null && !newColumns.isEmpty(),
          "Invalid columns: %s (leave unset for all columns)",
          newColumns);
      this.columns = List.copyOf(newColumns);
      return this;
    }

    public Builder columns(String... newColumns) {
      return columns(List.of(newColumns));
    }

    public Builder tail(TailPolicy newTail) {
      this.tail = Objects.requireNonNull(newTail, "tail");
      return this;
    }

    public Builder blockRows(int rows) {
      Preconditions.checkArgument(
          rows >= 1 && rows <= BLOCK_ROWS_MAX,
          "Invalid block_rows: %s (must be in 1..%s)",
          rows,
          BLOCK_ROWS_MAX);
      this.blockRows = rows;
      return this;
    }

    public Builder windowBlocks(int blocks) {
      Preconditions.checkArgument(
          blocks >= 1 && blocks <= WINDOW_BLOCKS_MAX,
          "Invalid window_blocks: %s (must be in 1..%s)",
          blocks,
          WINDOW_BLOCKS_MAX);
      this.windowBlocks = blocks;
      return this;
    }

    /**
     * Rows a window shuffles as one unit, at most {@code block_rows} (checked by the node): more
     * than 1 serves runs of neighbouring rows, which costs the node far less to gather.
     */
    public Builder runRows(int rows) {
      Preconditions.checkArgument(
          rows >= 1 && rows <= BLOCK_ROWS_MAX,
          "Invalid run_rows: %s (must be in 1..%s)",
          rows,
          BLOCK_ROWS_MAX);
      this.runRows = rows;
      return this;
    }

    public Builder leaseTimeoutMs(long millis) {
      Preconditions.checkArgument(
          millis >= LEASE_TIMEOUT_MS_MIN && millis <= LEASE_TIMEOUT_MS_MAX,
          "Invalid lease_timeout_ms: %s (must be in %s..%s)",
          millis,
          LEASE_TIMEOUT_MS_MIN,
          LEASE_TIMEOUT_MS_MAX);
      this.leaseTimeoutMs = millis;
      return this;
    }

    /**
     * Reads every epoch from the layout the job is registered on, even after the dataset is
     * refreshed (the dataset keeps that layout loaded as long as the job exists).
     */
    public Builder pinLayout() {
      this.pinLayout = true;
      return this;
    }

    public JobOptions build() {
      return new JobOptions(this);
    }
  }
}
