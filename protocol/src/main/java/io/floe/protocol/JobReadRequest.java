package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.util.Preconditions;
import java.util.List;
import java.util.Set;

/**
 * A {@code GetFlightInfo} command for a job: rank {@code rank} of {@code worldSize}, epoch {@code
 * epoch}, global batches {@code batchFrom, batchFrom + batchStep, …} below {@code batchTo} (null:
 * to the end of the epoch), up to {@code batchesPerMessage} of them in one record batch.
 *
 * @param avoid Flight locations the reader could not read from just now (a node that died before
 *     the cluster noticed): the plan places each slice on another node holding a copy of it, where
 *     the dataset has one
 */
public record JobReadRequest(
    String job,
    long epoch,
    int worldSize,
    int rank,
    long batchFrom,
    Long batchTo,
    long batchStep,
    int batchesPerMessage,
    List<String> avoid)
    implements ReadCommand {
  private static final String WHAT = "job read command";
  private static final Set<String> FIELDS =
      Set.of(
          "kind",
          "job",
          "epoch",
          "world_size",
          "rank",
          "batch_from",
          "batch_to",
          "batch_step",
          "batches_per_message",
          "avoid");

  /** Locations a reader may ask to avoid at once, and the characters of each. */
  public static final int AVOID_MAX = 16;

  public static final int LOCATION_CHARS_MAX = 512;

  /**
   * The most global batches one record batch may carry. A node also ends a record batch at {@code
   * 65,536} rows (or one batch's share, if that is more), so this bounds only tiny batches.
   */
  public static final int BATCHES_PER_MESSAGE_MAX = 1_024;

  /** The {@code kind} of a command descriptor that reads a training job's batches. */
  public static final String KIND = "job_read";

  public JobReadRequest {
    Preconditions.checkArgument(epoch >= 0, "Invalid epoch: %s (must be >= 0)", epoch);
    Preconditions.checkArgument(worldSize > 0, "Invalid world_size: %s (must be > 0)", worldSize);
    Preconditions.checkArgument(
        0 <= rank && rank < worldSize,
        "Invalid rank: %s (must be in 0..%s for world_size %s)",
        rank,
        worldSize - 1,
        worldSize);
    Preconditions.checkArgument(batchFrom >= 0, "Invalid batch_from: %s", batchFrom);
    Preconditions.checkArgument(
        batchTo == null || batchTo >= batchFrom,
        "Invalid batch_to: %s (must be >= batch_from %s)",
        batchTo,
        batchFrom);
    Preconditions.checkArgument(batchStep > 0, "Invalid batch_step: %s (must be > 0)", batchStep);
    Preconditions.checkArgument(
        1 <= batchesPerMessage && batchesPerMessage <= BATCHES_PER_MESSAGE_MAX,
        "Invalid batches_per_message: %s (must be in 1..%s)",
        batchesPerMessage,
        BATCHES_PER_MESSAGE_MAX);
    avoid = avoid == null ? List.of() : List.copyOf(avoid);
    Preconditions.checkArgument(
        avoid.size() <= AVOID_MAX,
        "Invalid avoid: %s locations (at most %s)",
        avoid.size(),
        AVOID_MAX);
    for (String location : avoid) {
      Preconditions.checkArgument(
          !location.isEmpty() && location.length() <= LOCATION_CHARS_MAX,
          "Invalid location in avoid: '%s' (1-%s characters)",
          io.floe.util.Excerpt.of(location),
          LOCATION_CHARS_MAX);
    }
  }

  /** A read placed wherever the dataset's layout says, as readers from before replicas ask. */
  public JobReadRequest(
      String job,
      long epoch,
      int worldSize,
      int rank,
      long batchFrom,
      Long batchTo,
      long batchStep,
      int batchesPerMessage) {
    this(job, epoch, worldSize, rank, batchFrom, batchTo, batchStep, batchesPerMessage, List.of());
  }

  /** A read of one global batch per record batch, as readers from before grouping ask. */
  public JobReadRequest(
      String job,
      long epoch,
      int worldSize,
      int rank,
      long batchFrom,
      Long batchTo,
      long batchStep) {
    this(job, epoch, worldSize, rank, batchFrom, batchTo, batchStep, 1, List.of());
  }

  /**
   * A command tagged {@code "kind": "job_read"} ({@link ReadCommand#parse} reads an untagged one).
   *
   * @throws IllegalArgumentException naming what is missing, malformed or unknown
   */
  public static JobReadRequest parse(ObjectNode node) {
    Fields fields = new Fields(node, WHAT, FIELDS);
    fields.requiredKind(KIND);
    Long from = fields.optionalLong("batch_from");
    Long step = fields.optionalLong("batch_step");
    return new JobReadRequest(
        fields.requiredJobId("job"),
        JobRequests.requiredLong(fields, "epoch", WHAT),
        fields.optionalInt("world_size", 1),
        fields.optionalInt("rank", 0),
        from == null ? 0 : from,
        fields.optionalLong("batch_to"),
        step == null ? 1 : step,
        fields.optionalInt("batches_per_message", 1),
        fields.optionalStrings("avoid"));
  }

  @Override
  public byte[] toJson() {
    ObjectNode node = Json.object();
    node.put("kind", KIND);
    node.put("job", job);
    node.put("epoch", epoch);
    node.put("world_size", worldSize);
    node.put("rank", rank);
    node.put("batch_from", batchFrom);
    if (batchTo != null) {
      node.put("batch_to", batchTo);
    }
    node.put("batch_step", batchStep);
    if (batchesPerMessage != 1) {
      node.put("batches_per_message", batchesPerMessage);
    }
    if (!avoid.isEmpty()) {
      avoid.forEach(node.putArray("avoid")::add);
    }
    return Json.bytes(node);
  }
}
