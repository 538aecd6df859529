package io.floe.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.protocol.JobStatusReply;
import io.floe.protocol.Json;
import io.floe.util.Preconditions;
import java.nio.charset.StandardCharsets;

/**
 * Where a deterministic training job stands: every rank consumed global batches {@code 0 …
 * batchesConsumed − 1} of {@code epoch}. Global batches do not depend on the world size, so any
 * number of ranks resumes from here with {@code batch_from = batchesConsumed} and the epoch still
 * reads every position exactly once.
 *
 * <p>The epoch order is a function of the layout the job pinned, its seed and its batch size, so
 * those travel with the checkpoint and {@link #resume} refuses a job that no longer matches them.
 * Save it with {@link #toJson()} next to the model's checkpoint.
 */
public record JobCheckpoint(
    String job, int epoch, long batchesConsumed, String layout, long seed, int batchRows) {

  public JobCheckpoint {
    Preconditions.checkArgument(job != null && !job.isEmpty(), "Invalid job id: '%s'", job);
    Preconditions.checkArgument(epoch >= 0, "Invalid epoch: %s (must be >= 0)", epoch);
    Preconditions.checkArgument(
        batchesConsumed >= 0, "Invalid batches consumed: %s (must be >= 0)", batchesConsumed);
    Preconditions.checkArgument(batchRows >= 1, "Invalid batch_rows: %s", batchRows);
  }

  /** The start of {@code epoch} of a job as registering it answered. */
  public static JobCheckpoint start(JobOptions options, JobStatusReply status, int epoch) {
    return new JobCheckpoint(
        options.job(), epoch, 0, status.layout(), options.seed(), options.batchRows());
  }

  /** The same epoch after {@code batches} more global batches were consumed. */
  public JobCheckpoint advance(long batches) {
    Preconditions.checkArgument(batches >= 0, "Invalid batch count: %s", batches);
    return new JobCheckpoint(job, epoch, batchesConsumed + batches, layout, seed, batchRows);
  }

  /** The start of the next epoch. */
  public JobCheckpoint nextEpoch() {
    return new JobCheckpoint(job, epoch + 1, 0, layout, seed, batchRows);
  }

  /**
   * Opens rank {@code rank} of {@code worldSize} from the first batch not consumed to the end of
   * the epoch. Registers the job (idempotent; after the cluster lost it, this registers it again).
   *
   * @throws IllegalArgumentException when {@code options} name another job, seed or batch size
   * @throws IllegalStateException when the job now pins another layout (the dataset was reloaded
   *     differently): the rest of this epoch would not be the rest of the same order
   */
  public JobReader resume(FloeClient client, JobOptions options, int worldSize, int rank) {
    Preconditions.checkArgument(
        job.equals(options.job()) && seed == options.seed() && batchRows == options.batchRows(),
        "Checkpoint of job '%s' (seed %s, batch_rows %s) does not match %s",
        job,
        seed,
        batchRows,
        options);
    client.registerJob(options);
    JobStatusReply status = client.jobStatus(options.job(), epoch);
    if (layout != null && !layout.equals(status.layout())) {
      throw new IllegalStateException(
          String.format(
              "Job '%s' now pins layout %s, the checkpoint was taken on %s; the dataset changed"
                  + " and epoch %d cannot be resumed",
              job, status.layout(), layout, epoch));
    }
    return client
        .jobReader(options)
        .registered(status)
        .epoch(epoch)
        .worldSize(worldSize)
        .rank(rank)
        .batchFrom(batchesConsumed)
        .open();
  }

  public String toJson() {
    ObjectNode node = Json.object();
    node.put("job", job);
    node.put("epoch", epoch);
    node.put("batches_consumed", batchesConsumed);
    if (layout != null) {
      node.put("layout", layout);
    }
    node.put("seed", seed);
    node.put("batch_rows", batchRows);
    return Json.string(node);
  }

  public static JobCheckpoint fromJson(String json) {
    JsonNode node = Json.parseObject(json.getBytes(StandardCharsets.UTF_8), "job checkpoint");
    for (String field : new String[] {"job", "epoch", "batches_consumed", "seed", "batch_rows"}) {
      Preconditions.checkArgument(node.hasNonNull(field), "Job checkpoint lacks '%s'", field);
    }
    return new JobCheckpoint(
        node.get("job").asText(),
        node.get("epoch").asInt(),
        node.get("batches_consumed").asLong(),
        node.hasNonNull("layout") ? node.get("layout").asText() : null,
        node.get("seed").asLong(),
        node.get("batch_rows").asInt());
  }
}
