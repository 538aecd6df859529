package io.floe.client;

import io.floe.protocol.JobReadRequest;
import io.floe.protocol.JobStatusReply;
import io.floe.ticket.JobBatchMetadata;
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
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
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

  /** The rows a record batch is asked to hold, several global batches when they are smaller. */
  static final int MESSAGE_ROWS = 1 << 15;

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

  /**
   * Nodes a stream could not reach lately, to the time (nanos) until which plans avoid them: until
   * the cluster notices a node's death (seconds), a plan would send the read there again, while a
   * copy of its slices may be elsewhere (a dataset of several replicas).
   */
  private final java.util.Map<String, Long> unreachable = new java.util.HashMap<>();

  /** Whether the last failure was a node found unreachable just now: planned again at once. */
  private boolean failingOver;

  /** How long a node a stream could not reach is avoided. */
  private static final Duration AVOID = Duration.ofSeconds(30);

  private JobReader(Builder builder, JobStatusReply status, long batchTo) {
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
        if (failingOver) {
          failingOver = false; // the next plan avoids the node: no reason to wait
        } else {
          backoff(attempt++);
        }
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
    JobStatusReply status = client.jobStatus(options.job(), epoch);
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
    FlightInfo info = plan(from, to);
    List<FlightStream> streams = new ArrayList<>(info.getEndpoints().size());
    List<Location> locations = new ArrayList<>(info.getEndpoints().size());
    try {
      for (FlightEndpoint endpoint : info.getEndpoints()) {
        Location location = client.locationOf(endpoint);
        locations.add(location);
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
    return new Chunk(to, streams, locations);
  }

  /** The command for batches {@code [from, to)}, with version 2's fields for a node of 2. */
  private byte[] command(long from, long to, boolean versionTwo) {
    // The protocol's own codec: the same encoding the node reads.
    return new JobReadRequest(
            options.job(),
            epoch,
            worldSize,
            rank,
            from,
            to,
            batchStep,
            versionTwo ? batchesPerMessage(from, to) : 1,
            versionTwo ? avoided() : List.of())
        .toJson();
  }

  /** The nodes to keep this read off: those a stream could not reach within {@link #AVOID}. */
  private List<String> avoided() {
    long now = System.nanoTime();
    unreachable.values().removeIf(until -> until - now <= 0);
    return unreachable.keySet().stream().sorted().limit(JobReadRequest.AVOID_MAX).toList();
  }

  /** A stream of {@code location} failed: if it could not reach the node, plans avoid it. */
  private void failed(Location location, FlightRuntimeException e) {
    String uri = location.getUri().toString();
    if (e.status().code() == org.apache.arrow.flight.FlightStatusCode.UNAVAILABLE
        && !avoided().contains(uri)) {
      unreachable.put(uri, System.nanoTime() + AVOID.toNanos());
      failingOver = true;
    }
  }

  /**
   * Global batches per record batch for a plan of batches {@code [from, to)}: about {@link
   * #MESSAGE_ROWS} rows a record batch (a record batch costs the node the same whatever its size).
   */
  private int batchesPerMessage(long from, long to) {
    long batches = (to - from + batchStep - 1) / batchStep;
    long rowsPerRank = Math.max(1, options.batchRows() / worldSize);
    return (int)
        Math.max(
            1,
            Math.min(
                Math.min(batches, JobReadRequest.BATCHES_PER_MESSAGE_MAX),
                MESSAGE_ROWS / rowsPerRank));
  }

  /**
   * Plans through the entry node, then through every other node seen: one that is leaving may not
   * answer. A failure that no node can get past (and a forgotten job, which registering cures) is
   * thrown at once; otherwise the curable failure is thrown for {@link #next()} to retry.
   */
  private FlightInfo plan(long from, long to) {
    FlightRuntimeException curable = null;
    FlightRuntimeException incurable = null;
    for (Location entry : client.entries()) {
      try {
        FlightDescriptor descriptor =
            FlightDescriptor.command(command(from, to, client.speaks(entry, 2)));
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
    final List<Location> locations;

    /** The batch index of the part each stream has loaded and not handed over yet, or -1. */
    private final long[] loaded;

    /** The metadata of each stream's current record batch, which may hold several parts. */
    private final JobBatchMetadata[] message;

    /** Which of its record batch's parts each stream is at, and the row where that part starts. */
    private final int[] part;

    private final int[] start;

    Chunk(long to, List<FlightStream> streams, List<Location> locations) {
      this.to = to;
      this.streams = streams;
      this.locations = locations;
      this.loaded = new long[streams.size()];
      this.message = new JobBatchMetadata[streams.size()];
      this.part = new int[streams.size()];
      this.start = new int[streams.size()];
      java.util.Arrays.fill(loaded, -1);
    }

    /**
     * Rows {@code [start, start + rows)} of a stream's record batch: one batch's part; {@code
     * alone} when the record batch holds no other.
     */
    private record Part(VectorSchemaRoot root, int start, int rows, int[] places, boolean alone) {}

    /**
     * The rank's batch {@code index}: the parts of every stream whose next part is that batch's (a
     * node holding none of its rows sends none), put in place by their metadata.
     */
    JobBatch assemble(long index) {
      List<Part> parts = new ArrayList<>(streams.size());
      long rows = 0;
      for (int i = 0; i < streams.size(); i++) {
        if (loaded[i] < 0) {
          load(i);
        }
        if (loaded[i] == index) {
          JobBatchMetadata metadata = message[i];
          int n = metadata.rows(part[i]);
          parts.add(
              new Part(
                  streams.get(i).getRoot(),
                  start[i],
                  n,
                  metadata.places(part[i]),
                  metadata.batchCount() == 1));
          rows += n;
          next(i, n);
        } else if (loaded[i] < index) {
          throw protocol("endpoint %d sent batch %d after batch %d", i, loaded[i], index);
        }
      }
      long expected = options.batchRows() / worldSize;
      if (rows != expected) {
        throw protocol(
            "batch %d has %d rows over %d endpoints, expected %d",
            index, rows, parts.size(), expected);
      }
      VectorSchemaRoot batch =
          VectorSchemaRoot.create(parts.get(0).root().getSchema(), client.allocator());
      try {
        fill(batch, parts);
      } catch (RuntimeException e) {
        batch.close();
        throw e;
      }
      return new JobBatch(options.job(), epoch, index, batch, null);
    }

    /** Moves stream {@code i} past a part of {@code rows} rows: to its next part, or its end. */
    private void next(int i, int rows) {
      start[i] += rows;
      part[i]++;
      if (part[i] < message[i].batchCount()) {
        loaded[i] = message[i].batch(part[i]);
      } else {
        loaded[i] = -1; // the record batch's parts are all handed over: the next one is loaded
      }
    }

    /** Loads stream {@code i}'s next record batch and reads its metadata; MAX_VALUE at its end. */
    private void load(int i) {
      FlightStream stream = streams.get(i);
      boolean more;
      try {
        more = stream.next();
      } catch (FlightRuntimeException e) {
        failed(locations.get(i), e);
        throw e;
      }
      if (!more) {
        loaded[i] = Long.MAX_VALUE;
        return;
      }
      ArrowBuf metadata = stream.getLatestMetadata();
      if (metadata == null) {
        throw protocol("endpoint %d sent a record batch without its batch index", i);
      }
      JobBatchMetadata parsed;
      try {
        parsed =
            JobBatchMetadata.decode(
                metadata.nioBuffer(0, (int) metadata.readableBytes()),
                stream.getRoot().getRowCount());
      } catch (IllegalArgumentException e) {
        throw protocol("endpoint %d: %s", i, e.getMessage());
      }
      message[i] = parsed;
      part[i] = 0;
      start[i] = 0;
      loaded[i] = parsed.batch(0);
    }

    private IllegalStateException protocol(String template, Object... args) {
      return new IllegalStateException(
          String.format("Job '%s' epoch %d rank %d/%d: ", options.job(), epoch, rank, worldSize)
              + String.format(template, args));
    }

    /**
     * A batch from one part in order (a one-node cluster, or all of the batch on one node) takes
     * that stream's buffers without copying (a view of them when the record batch holds other
     * batches' parts too); parts from several nodes are copied into place.
     */
    private void fill(VectorSchemaRoot batch, List<Part> parts) {
      if (parts.size() == 1 && parts.get(0).places() == null) {
        Part only = parts.get(0);
        for (int c = 0; c < only.root().getFieldVectors().size(); c++) {
          org.apache.arrow.vector.util.TransferPair transfer =
              only.root().getVector(c).makeTransferPair(batch.getVector(c));
          if (only.alone()) {
            transfer.transfer();
          } else {
            transfer.splitAndTransfer(only.start(), only.rows());
          }
        }
        batch.setRowCount(only.rows());
        return;
      }
      int rows = 0;
      for (Part part : parts) {
        rows += part.rows();
      }
      // Which part and row fills each place, so that the copy writes the places in order.
      int[] partOf = new int[rows];
      int[] rowOf = new int[rows];
      java.util.Arrays.fill(partOf, -1);
      for (int p = 0; p < parts.size(); p++) {
        Part part = parts.get(p);
        for (int r = 0; r < part.rows(); r++) {
          int place = part.places() == null ? r : part.places()[r];
          if (place < 0 || place >= rows || partOf[place] >= 0) {
            throw protocol(
                "a part puts a row at place %d of %d twice or out of range", place, rows);
          }
          partOf[place] = p;
          rowOf[place] = part.start() + r;
        }
      }
      batch.allocateNew();
      for (int c = 0; c < batch.getFieldVectors().size(); c++) {
        FieldVector target = batch.getVector(c);
        for (int place = 0; place < rows; place++) {
          target.copyFromSafe(rowOf[place], place, parts.get(partOf[place]).root().getVector(c));
        }
        target.setValueCount(rows);
      }
      batch.setRowCount(rows);
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
    private JobStatusReply registered;

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
    Builder registered(JobStatusReply status) {
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
      JobStatusReply status = client.jobStatus(options.job(), epoch);
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
