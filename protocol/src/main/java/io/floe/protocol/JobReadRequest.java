package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.util.Preconditions;
import java.util.Set;

/**
 * A {@code GetFlightInfo} command for a job: rank {@code rank} of {@code worldSize}, epoch {@code
 * epoch}, global batches {@code batchFrom, batchFrom + batchStep, …} below {@code batchTo} (null:
 * to the end of the epoch).
 */
public record JobReadRequest(
    String job, long epoch, int worldSize, int rank, long batchFrom, Long batchTo, long batchStep) {
  private static final String WHAT = "job read command";
  private static final Set<String> FIELDS =
      Set.of("job", "epoch", "world_size", "rank", "batch_from", "batch_to", "batch_step");

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
  }

  /** Whether a command names a job (else it names a dataset shard). */
  public static boolean isJobCommand(ObjectNode command) {
    return command.has("job");
  }

  public static JobReadRequest parse(ObjectNode node) {
    Fields fields = new Fields(node, WHAT, FIELDS);
    Long from = fields.optionalLong("batch_from");
    Long step = fields.optionalLong("batch_step");
    return new JobReadRequest(
        fields.requiredJobId("job"),
        JobRequests.requiredLong(fields, "epoch", WHAT),
        fields.optionalInt("world_size", 1),
        fields.optionalInt("rank", 0),
        from == null ? 0 : from,
        fields.optionalLong("batch_to"),
        step == null ? 1 : step);
  }

  public byte[] toJson() {
    ObjectNode node = Json.object();
    node.put("job", job);
    node.put("epoch", epoch);
    node.put("world_size", worldSize);
    node.put("rank", rank);
    node.put("batch_from", batchFrom);
    if (batchTo != null) {
      node.put("batch_to", batchTo);
    }
    node.put("batch_step", batchStep);
    return Json.bytes(node);
  }
}
