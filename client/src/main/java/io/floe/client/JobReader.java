package io.floe.client;

import io.floe.protocol.JobReadRequest;
import io.floe.util.Preconditions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one rank's share of a deterministic epoch of a training job, one global batch index at a
 * time (docs/protocol.md, "Deterministic reads").
 *
 * <p>It plans a chunk of batch indices at a time with {@code GetFlightInfo}, opens every endpoint
 * of the chunk at its node, and builds batch {@code k} from the {@code k}-th record batch of each
 * stream, in endpoint order, in a root of its own from the client's allocator. A batch is only
 * handed out whole, so when a stream fails (node gone, slice moved, dataset reloading) the reader
 * drops the chunk, plans again from the first batch it has not handed out and goes on: no batch is
 * handed out twice or skipped. A job the cluster forgot (its entity was lost with its node) is
 * registered again with the same options, and must pin the same layout, or the reader fails.
 *
 * <p>Open streams hold one record batch each on the client; the caller owns and closes every {@link
 * JobBatch}. {@link #close()} cancels the open streams. Not thread-safe.
 */
public final class JobReader implements Iterator<JobBatch>, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobReader.class);

  /** Batch indices planned at once: fewer plans against fewer streams held open. */
  public static final int CHUNK_BATCHES_DEFAULT = 64;

  /** How long one batch may fail to arrive (retrying all along) before the reader gives up. */
  public static final Duration PATIENCE_DEFAULT = Duration.ofMinutes(2);

  private static final Duration BACKOFF_MAX = Duration.ofSeconds(2);

  private final FloeClient client;
  private final JobOptions options;
  private final int epoch;
  private final int worldSize;
  private final int rank;
  private final long batchTo;
  private final long batchStep;
  private final int chunkBatches;
  private final Duration patience;
  private final long batchesPerEpoch;
  private final String layout;
  private long next;
  private Chunk chunk;
  private boolean closed;

  private JobReader(Builder builder, JobStatus status, long batchTo) {
    this.client = builder.client;
    this.options = builder.options;
    this.epoch = builder.epoch;
    this.worldSize = builder.worldSize;
    this.rank = builder.rank;
    this.next = builder.batchFrom;
    this.batchTo = batchTo;
    this.batchStep = builder.batchStep;
    this.chunkBatches = builder.chunkBatches;
    this.patience = builder.patience;
    this.batchesPerEpoch = status.batchesPerEpoch();
    this.layout = status.layout();
  }

  public JobOptions options() {
    return options;
  }

  public int epoch() {
    return epoch;
  }

  /** Global batches in this epoch. */
  public long batchesPerEpoch() {
    return batchesPerEpoch;
  }

  /** The layout the job pinned, as registering it answered. */
  public String layout() {
    return layout;
  }

  /** The global batch index {@link #next()} hands out next. */
  public long nextBatch() {
    return next;
  }

  /**
   * Where this rank stands, taking every batch handed out as consumed: resuming it at any world
   * size continues with the next global batch. Only meaningful with {@code batch_step} 1.
   */
  public JobCheckpoint checkpoint() {
    Preconditions.checkState(
        batchStep == 1, "A checkpoint needs batch_step 1, this reader steps by %s", batchStep);
    return new JobCheckpoint(
        options.job(), epoch, Math.min(next, batchTo), layout, options.seed(), options.batchRows());
  }

  @Override
  public boolean hasNext() {
    return !closed && next < batchTo;
  }

  /**
   * Assembles and hands out the next batch of this rank, planning again as often as needed.
   *
   * @throws FlightRuntimeException a failure that planning again cannot cure, or a curable one that
   *     went on for longer than the patience
   * @throws IllegalStateException when the server breaks the protocol (a stream ends early, a batch
   *     has the wrong size) or the job came back with another layout
   */
  @Override
  public JobBatch next() {
    if (!hasNext()) {
      throw new NoSuchElementException(
          "Job '" + options.job() + "' epoch " + epoch + " has no batch left for rank " + rank);
    }
    long deadline = System.nanoTime() + patience.toNanos();
    int attempt = 0;
    boolean register = false;
    while (true) {
      try {
        if (register) {
          registerAgain();
          register = false;
        }
        if (chunk == null) {
          chunk = openChunk();
        }
        JobBatch batch = chunk.assemble(next);
        next += batchStep;
        if (next >= chunk.to) {
          closeChunk();
        }
        return batch;
      } catch (FlightRuntimeException e) {
        closeChunk();
        if (isUnknownJob(e)) {
          register = true;
        } else if (!ShardReader.retryable(e)) {
          throw e;
        }
        if (System.nanoTime() > deadline) {
          throw e;
        }
        LOG.info(
            "Job '{}' epoch {} rank {}/{}: batch {} failed ({}: {}); planning again",
            options.job(),
            epoch,
            rank,
            worldSize,
            next,
            e.status().code(),
            e.status().description());
        backoff(attempt++);
      }
    }
  }

  /** Stops reading: cancels the open streams. Batches already handed out stay the caller's. */
  @Override
  public void close() {
    closed = true;
    closeChunk();
  }

  private void registerAgain() {
    client.registerJob(options);
    JobStatus status = client.jobStatus(options.job(), epoch);
    if (layout != null && !layout.equals(status.layout())) {
      throw new IllegalStateException(
          String.format(
              "Job '%s' was registered again with layout %s, but epoch %d was being read with"
                  + " layout %s; the dataset changed under the job",
              options.job(), status.layout(), epoch, layout));
    }
    LOG.info("Job '{}' was unknown to the cluster; registered it again", options.job());
  }

  private Chunk openChunk() {
    long from = next;
    long to = Math.min(batchTo, from + batchStep * chunkBatches);
    FlightInfo info = plan(command(from, to));
    List<FlightStream> streams = new ArrayList<>(info.getEndpoints().size());
    try {
      for (FlightEndpoint endpoint : info.getEndpoints()) {
        Location location = client.locationOf(endpoint);
        streams.add(client.flight(location).getStream(endpoint.getTicket()));
      }
    } catch (RuntimeException e) {
      closeAll(streams);
      throw e;
    }
    if (streams.isEmpty()) {
      throw new IllegalStateException(
          String.format(
              "The plan of job '%s' epoch %d batches [%d, %d) has no endpoint", //
              options.job(), epoch, from, to));
    }
    return new Chunk(to, streams);
  }

  private byte[] command(long from, long to) {
    // The protocol's own codec: the same encoding the node reads.
    return new JobReadRequest(options.job(), epoch, worldSize, rank, from, to, batchStep).toJson();
  }

  /**
   * Plans through the entry node, then through every other node seen: one that is leaving may not
   * answer. A failure that no node can get past (and a forgotten job, which registering cures) is
   * thrown at once; otherwise the curable failure is thrown for {@link #next()} to retry.
   */
  private FlightInfo plan(byte[] command) {
    FlightDescriptor descriptor = FlightDescriptor.command(command);
    FlightRuntimeException curable = null;
    FlightRuntimeException incurable = null;
    for (Location entry : client.entries()) {
      try {
        return client.flight(entry).getInfo(descriptor);
      } catch (FlightRuntimeException e) {
        LOG.debug("Planning through {} failed: {}", entry.getUri(), e.getMessage());
        if (isUnknownJob(e)) {
          throw e;
        } else if (ShardReader.retryable(e)) {
          curable = e;
        } else if (incurable == null) {
          incurable = e;
        }
      }
    }
    throw curable != null ? curable : incurable;
  }

  private void closeChunk() {
    if (chunk != null) {
      Chunk open = chunk;
      chunk = null;
      closeAll(open.streams);
    }
  }

  private static void closeAll(List<FlightStream> streams) {
    for (FlightStream stream : streams) {
      try {
        stream.close();
      } catch (Exception e) {
        // A cancelled stream may report its cancellation; nothing of it is kept.
        LOG.debug("Closing a job stream: {}", e.getMessage());
      }
    }
  }

  /** An unknown job: its entity was lost (or dropped); registering it again cures that. */
  static boolean isUnknownJob(FlightRuntimeException e) {
    return Failures.is(e, io.floe.protocol.ErrorCode.JOB_NOT_FOUND);
  }

  static void backoff(int attempt) {
    long millis = Math.min(BACKOFF_MAX.toMillis(), 100L << Math.min(attempt, 5));
    sleep(millis);
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting to retry", e);
    }
  }

  /** The open streams of one plan: batch indices from {@link #next} up to {@code to}. */
  private final class Chunk {
    final long to;
    final List<FlightStream> streams;

    Chunk(long to, List<FlightStream> streams) {
      this.to = to;
      this.streams = streams;
    }

    JobBatch assemble(long index) {
      List<VectorSchemaRoot> parts = new ArrayList<>(streams.size());
      long rows = 0;
      for (int i = 0; i < streams.size(); i++) {
        FlightStream stream = streams.get(i);
        if (!stream.next()) {
          throw new IllegalStateException(
              String.format(
                  "Endpoint %d of %d of job '%s' epoch %d rank %d/%d ended before batch %d;"
                      + " every endpoint must carry one record batch per listed batch",
                  i, streams.size(), options.job(), epoch, rank, worldSize, index));
        }
        VectorSchemaRoot part = stream.getRoot();
        rows += part.getRowCount();
        parts.add(part);
      }
      long expected = options.batchRows() / worldSize;
      if (rows != expected) {
        throw new IllegalStateException(
            String.format(
                "Batch %d of job '%s' epoch %d rank %d/%d has %d rows, expected %d",
                index, options.job(), epoch, rank, worldSize, rows, expected));
      }
      VectorSchemaRoot batch =
          VectorSchemaRoot.create(parts.get(0).getSchema(), client.allocator());
      try {
        fill(batch, parts);
      } catch (RuntimeException e) {
        batch.close();
        throw e;
      }
      return new JobBatch(options.job(), epoch, index, batch, null);
    }

    /**
     * A batch from one endpoint (the usual case with large blocks) takes that stream's buffers
     * without copying; a batch spread over several slices is copied together.
     */
    private void fill(VectorSchemaRoot batch, List<VectorSchemaRoot> parts) {
      List<VectorSchemaRoot> nonEmpty = new ArrayList<>();
      for (VectorSchemaRoot part : parts) {
        if (part.getRowCount() > 0) {
          nonEmpty.add(part);
        }
      }
      if (nonEmpty.size() == 1) {
        VectorSchemaRoot only = nonEmpty.get(0);
        for (int c = 0; c < only.getFieldVectors().size(); c++) {
          only.getVector(c).makeTransferPair(batch.getVector(c)).transfer();
        }
        batch.setRowCount(only.getRowCount());
      } else {
        // The appender reads the target's offsets: it needs allocated (if empty) buffers.
        batch.allocateNew();
        VectorSchemaRootAppender.append(false, batch, nonEmpty.toArray(new VectorSchemaRoot[0]));
      }
    }
  }

  /** A reader's settings; {@link #open()} registers the job and checks them against it. */
  public static final class Builder {
    private final FloeClient client;
    private final JobOptions options;
    private int epoch;
    private int worldSize = 1;
    private int rank;
    private long batchFrom;
    private Long batchTo;
    private long batchStep = 1;
    private int chunkBatches = CHUNK_BATCHES_DEFAULT;
    private Duration patience = PATIENCE_DEFAULT;
    private JobStatus registered;

    Builder(FloeClient client, JobOptions options) {
      this.client = client;
      this.options = options;
    }

    public Builder epoch(int newEpoch) {
      Preconditions.checkArgument(newEpoch >= 0, "Invalid epoch: %s (must be >= 0)", newEpoch);
      this.epoch = newEpoch;
      return this;
    }

    /** Ranks sharing every global batch; must divide the job's {@code batch_rows}. */
    public Builder worldSize(int size) {
      Preconditions.checkArgument(size >= 1, "Invalid world_size: %s (must be >= 1)", size);
      this.worldSize = size;
      return this;
    }

    public Builder rank(int newRank) {
      Preconditions.checkArgument(newRank >= 0, "Invalid rank: %s (must be >= 0)", newRank);
      this.rank = newRank;
      return this;
    }

    /** The first global batch to read: 0, or the batches consumed before a resume. */
    public Builder batchFrom(long from) {
      Preconditions.checkArgument(from >= 0, "Invalid batch_from: %s (must be >= 0)", from);
      this.batchFrom = from;
      return this;
    }

    /** Stops before this global batch (default: the end of the epoch). */
    public Builder batchTo(long to) {
      Preconditions.checkArgument(to >= 0, "Invalid batch_to: %s (must be >= 0)", to);
      this.batchTo = to;
      return this;
    }

    public Builder batchStep(long step) {
      Preconditions.checkArgument(step >= 1, "Invalid batch_step: %s (must be >= 1)", step);
      this.batchStep = step;
      return this;
    }

    /** Batch indices per plan; smaller chunks hold streams for less time. */
    public Builder chunkBatches(int batches) {
      Preconditions.checkArgument(
          batches >= 1, "Invalid chunk size: %s batches (must be >= 1)", batches);
      this.chunkBatches = batches;
      return this;
    }

    /** How long one batch may keep failing before the reader gives up. */
    public Builder patience(Duration newPatience) {
      Preconditions.checkArgument(
          newPatience != null && !newPatience.isNegative(), "Invalid patience: %s", newPatience);
      this.patience = newPatience;
      return this;
    }

    /** Skips registering: the caller has just registered the job and knows its status. */
    Builder registered(JobStatus status) {
      this.registered = status;
      return this;
    }

    /**
     * Registers the job (idempotent) and opens the reader; nothing is streamed before the first
     * {@link JobReader#next()}.
     */
    public JobReader open() {
      Preconditions.checkArgument(
          rank < worldSize, "Invalid rank: %s (world_size is %s)", rank, worldSize);
      Preconditions.checkArgument(
          options.batchRows() % worldSize == 0,
          "Invalid world_size: %s (must divide batch_rows %s)",
          worldSize,
          options.batchRows());
      if (registered == null) {
        client.registerJob(options);
      }
      // The epoch's own layout and batch count: after a refresh, epochs differ.
      JobStatus status = client.jobStatus(options.job(), epoch);
      long end = batchTo == null ? status.batchesPerEpoch() : batchTo;
      Preconditions.checkArgument(
          end <= status.batchesPerEpoch(),
          "Invalid batch_to: %s (job '%s' has %s batches per epoch)",
          end,
          options.job(),
          status.batchesPerEpoch());
      Preconditions.checkArgument(
          batchFrom <= end, "Invalid batch range: [%s, %s)", batchFrom, end);
      return new JobReader(this, status, end);
    }
  }
}
