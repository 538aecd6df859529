package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.job.EpochProgress;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.tenant.Owner;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A job's status as {@code register_job}, {@code job_status}, {@code drop_job} and (one per job)
 * {@code list_jobs} answer it (docs/protocol.md, "Job status"): its settings, the layout of {@code
 * epoch}, its counters and the dynamic-mode epochs it tracks. The node writes it with {@link
 * #encode}, clients read it with {@link #parse}; fields a reader does not know are left alone.
 *
 * @param spec the job's settings, every one explicit
 * @param epoch the epoch whose layout, rows and batches this reports
 * @param layout the fingerprint of that epoch's dataset layout; an epoch's order depends on it, so
 *     a checkpoint is only valid against the same layout
 * @param batchesPerEpoch global batches in that epoch, after the tail policy
 * @param layouts the layout each run of epochs reads, from its first epoch on
 * @param epochs the dynamic-mode epochs the job's entity tracks (empty in deterministic mode)
 * @param dropped the answer to {@code drop_job}: the status the job had
 * @param owner the caller (and its tenant) that registered it; only the tenant for a job registered
 *     before owners were kept; null from a node that does not report owners
 */
public record JobStatusReply(
    JobSpec spec,
    long epoch,
    long rows,
    long snapshotId,
    String layout,
    long batchesPerEpoch,
    List<LayoutRun> layouts,
    Counters counters,
    List<EpochProgress> epochs,
    boolean dropped,
    Owner owner) {
  private static final String WHAT = "job status";

  /** The layout epochs {@code fromEpoch} on read (until the next run's first epoch). */
  public record LayoutRun(long fromEpoch, String layout, long snapshotId, long rows) {}

  /** Dynamic-mode totals over the job's life. */
  public record Counters(
      long rowsLeased, long rowsAcknowledged, long rowsReissued, long leasesActive) {}

  public JobStatusReply {
    Objects.requireNonNull(spec, "spec");
    Objects.requireNonNull(counters, "counters");
    layouts = List.copyOf(layouts);
    epochs = List.copyOf(epochs);
  }

  public String job() {
    return spec.job();
  }

  public String dataset() {
    return spec.dataset();
  }

  public JobMode mode() {
    return spec.mode();
  }

  /** This status as {@code drop_job} answers it: the status the job had. */
  public JobStatusReply asDropped() {
    return new JobStatusReply(
        spec,
        epoch,
        rows,
        snapshotId,
        layout,
        batchesPerEpoch,
        layouts,
        counters,
        epochs,
        true,
        owner);
  }

  public byte[] encode() {
    return Json.bytes(toNode());
  }

  /** The answer to {@code list_jobs}: a JSON array of statuses. */
  public static byte[] encodeList(List<JobStatusReply> statuses) {
    ArrayNode array = Json.object().arrayNode();
    statuses.forEach(status -> array.add(status.toNode()));
    return Json.bytes(array);
  }

  public static JobStatusReply parse(byte[] body) {
    JsonNode node = Json.parseReply(body, WHAT);
    if (!node.isObject()) {
      throw new IllegalArgumentException("Invalid " + WHAT + ": expected a JSON object");
    }
    return parse((ObjectNode) node);
  }

  public static List<JobStatusReply> parseList(byte[] body) {
    JsonNode node = Json.parseReply(body, "job list");
    if (!node.isArray()) {
      throw new IllegalArgumentException("Invalid job list: expected a JSON array");
    }
    List<JobStatusReply> statuses = new ArrayList<>();
    for (JsonNode element : node) {
      if (!element.isObject()) {
        throw new IllegalArgumentException("Invalid job list: expected objects only");
      }
      statuses.add(parse((ObjectNode) element));
    }
    return List.copyOf(statuses);
  }

  ObjectNode toNode() {
    ObjectNode node = JobRequest.toJson(spec);
    node.put("epoch", epoch);
    node.put("rows", rows);
    node.put("snapshot_id", snapshotId);
    node.put("layout", layout);
    node.put("batches_per_epoch", batchesPerEpoch);
    ArrayNode runs = node.putArray("layouts");
    for (LayoutRun run : layouts) {
      ObjectNode at = runs.addObject();
      at.put("from_epoch", run.fromEpoch());
      at.put("layout", run.layout());
      at.put("snapshot_id", run.snapshotId());
      at.put("rows", run.rows());
    }
    ObjectNode totals = node.putObject("counters");
    totals.put("rows_leased", counters.rowsLeased());
    totals.put("rows_acknowledged", counters.rowsAcknowledged());
    totals.put("rows_reissued", counters.rowsReissued());
    totals.put("leases_active", counters.leasesActive());
    ArrayNode progress = node.putArray("epochs");
    for (EpochProgress at : epochs) {
      ObjectNode each = progress.addObject();
      each.put("epoch", at.epoch());
      each.put("batches", at.batches());
      each.put("pending", at.pending());
      each.put("leased", at.leased());
      each.put("acknowledged", at.acknowledged());
    }
    Owners.put(node, owner);
    if (dropped) {
      node.put("dropped", true);
    }
    return node;
  }

  static JobStatusReply parse(ObjectNode node) {
    Fields fields = Fields.lenient(node, WHAT);
    ObjectNode counters = fields.optionalObject("counters");
    if (counters == null) {
      throw new IllegalArgumentException("Missing field 'counters' in " + WHAT);
    }
    Fields totals = Fields.lenient(counters, WHAT + " counters");
    return new JobStatusReply(
        JobRequest.parseWithin(node, WHAT),
        fields.requiredLong("epoch"),
        fields.requiredLong("rows"),
        fields.requiredLong("snapshot_id"),
        fields.optionalString("layout"),
        fields.requiredLong("batches_per_epoch"),
        fields.optionalObjects("layouts").stream().map(JobStatusReply::layoutRun).toList(),
        new Counters(
            totals.requiredLong("rows_leased"),
            totals.requiredLong("rows_acknowledged"),
            totals.requiredLong("rows_reissued"),
            totals.requiredLong("leases_active")),
        fields.optionalObjects("epochs").stream().map(JobStatusReply::epochProgress).toList(),
        fields.optionalBoolean("dropped", false),
        Owners.parse(node, WHAT));
  }

  private static LayoutRun layoutRun(ObjectNode node) {
    Fields fields = Fields.lenient(node, WHAT + " layout");
    return new LayoutRun(
        fields.requiredLong("from_epoch"),
        fields.optionalString("layout"),
        fields.requiredLong("snapshot_id"),
        fields.requiredLong("rows"));
  }

  private static EpochProgress epochProgress(ObjectNode node) {
    Fields fields = Fields.lenient(node, WHAT + " epoch");
    return new EpochProgress(
        fields.requiredLong("epoch"),
        fields.requiredLong("batches"),
        fields.requiredLong("pending"),
        fields.requiredLong("leased"),
        fields.requiredLong("acknowledged"));
  }
}
