package io.floe.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * A job's status as {@code register_job}, {@code job_status} and {@code drop_job} answer it: the
 * fields a reader acts on, typed, and the whole answer in {@link #json()} for the rest.
 *
 * @param layout the dataset layout (snapshot and slices) the job pinned; an epoch's order depends
 *     on it, so a checkpoint is only valid against the same layout
 * @param batchesPerEpoch global batches in one epoch, after the tail policy
 * @param dropped whether this answers a {@code drop_job}
 */
public record JobStatus(
    String job,
    String dataset,
    io.floe.job.JobMode mode,
    long rows,
    long batchesPerEpoch,
    String layout,
    long snapshotId,
    Counters counters,
    List<EpochProgress> epochs,
    boolean dropped,
    JsonNode json) {

  /** Dynamic-mode totals over the job's life. */
  public record Counters(
      long rowsLeased, long rowsAcknowledged, long rowsReissued, long leasesActive) {}

  /** A dynamic-mode epoch the job tracks: its batches by state. */
  public record EpochProgress(
      int epoch, long batches, long pending, long leased, long acknowledged) {}

  /** Reads a status answer; absent fields read as empty or zero. */
  public static JobStatus from(JsonNode json) {
    JsonNode counters = json.path("counters");
    List<EpochProgress> epochs = new ArrayList<>();
    for (JsonNode epoch : json.path("epochs")) {
      epochs.add(
          new EpochProgress(
              epoch.path("epoch").asInt(),
              epoch.path("batches").asLong(),
              epoch.path("pending").asLong(),
              epoch.path("leased").asLong(),
              epoch.path("acknowledged").asLong()));
    }
    String mode = json.path("mode").asText("");
    return new JobStatus(
        json.path("job").asText(),
        json.path("dataset").asText(),
        mode.isEmpty() ? null : io.floe.job.JobMode.parse(mode),
        json.path("rows").asLong(),
        json.path("batches_per_epoch").asLong(),
        json.path("layout").asText(null),
        json.path("snapshot_id").asLong(),
        new Counters(
            counters.path("rows_leased").asLong(),
            counters.path("rows_acknowledged").asLong(),
            counters.path("rows_reissued").asLong(),
            counters.path("leases_active").asLong()),
        List.copyOf(epochs),
        json.path("dropped").asBoolean(false),
        json);
  }

  @Override
  public String toString() {
    return "JobStatus" + json;
  }
}
