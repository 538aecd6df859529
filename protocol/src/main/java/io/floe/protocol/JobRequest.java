package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.TailPolicy;
import java.util.List;
import java.util.Set;

/** The body of {@code register_job}: a job spec in its wire form. */
public final class JobRequest {
  private static final String WHAT = "register_job action body";
  private static final Set<String> FIELDS =
      Set.of(
          "job",
          "dataset",
          "seed",
          "shuffle",
          "mode",
          "columns",
          "batch_rows",
          "tail",
          "block_rows",
          "window_blocks",
          "run_rows",
          "lease_timeout_ms",
          "pin_layout");

  private JobRequest() {}

  public static JobSpec parse(byte[] body) {
    return parse(Json.parseObject(body, WHAT), WHAT);
  }

  /**
   * The spec's fields of {@code reply} (a job's status), read as {@code register_job} reads them.
   */
  static JobSpec parseWithin(ObjectNode reply, String what) {
    ObjectNode spec = Json.object();
    FIELDS.forEach(
        field -> {
          if (reply.has(field)) {
            spec.set(field, reply.get(field));
          }
        });
    return parse(spec, what);
  }

  private static JobSpec parse(ObjectNode node, String what) {
    Fields fields = new Fields(node, what, FIELDS);
    Long batchRows = fields.optionalLong("batch_rows");
    if (batchRows == null) {
      throw new IllegalArgumentException("Missing field 'batch_rows' in " + what);
    }
    if (batchRows < 1 || batchRows > JobSpec.MAX_BATCH_ROWS) {
      throw new IllegalArgumentException(
          String.format(
              "Invalid batch_rows: %d (must be in 1..%d)", batchRows, JobSpec.MAX_BATCH_ROWS));
    }
    Long seed = fields.optionalLong("seed");
    Long leaseTimeout = fields.optionalLong("lease_timeout_ms");
    String mode = fields.optionalString("mode");
    String tail = fields.optionalString("tail");
    int runRows = fields.optionalInt("run_rows", JobSpec.RUN_ROWS_DEFAULT);
    if (runRows < 1) {
      // JobSpec reads 0 as 1 (the records from before runs); a request must say 1 or more.
      throw new IllegalArgumentException(
          String.format("Invalid run_rows: %d (must be at least 1)", runRows));
    }
    return new JobSpec(
        fields.requiredJobId("job"),
        fields.requiredDatasetName("dataset"),
        seed == null ? 0 : seed,
        fields.optionalBoolean("shuffle", true),
        mode == null ? JobMode.DETERMINISTIC : JobMode.parse(mode),
        fields.optionalStrings("columns"),
        batchRows.intValue(),
        tail == null ? TailPolicy.DROP : TailPolicy.parse(tail),
        fields.optionalInt("block_rows", JobSpec.BLOCK_ROWS_DEFAULT),
        fields.optionalInt("window_blocks", JobSpec.WINDOW_BLOCKS_DEFAULT),
        runRows,
        leaseTimeout == null ? JobSpec.LEASE_TIMEOUT_MILLIS_DEFAULT : leaseTimeout,
        fields.optionalBoolean("pin_layout", false));
  }

  /** The spec as {@code register_job} takes it (every field explicit). */
  public static ObjectNode toJson(JobSpec spec) {
    return new Body(
            spec.job(),
            spec.dataset(),
            spec.batchRows(),
            spec.seed(),
            spec.shuffle(),
            spec.mode(),
            spec.columns(),
            spec.tail(),
            spec.blockRows(),
            spec.windowBlocks(),
            spec.runRows(),
            spec.leaseTimeoutMillis(),
            spec.pinLayout())
        .json();
  }

  /**
   * A {@code register_job} body as a client builds it: the required fields, and the optional ones
   * it sets (null: left out, so the node's default applies, and a node that predates a field is not
   * sent it). {@link #parse} reads it.
   */
  public record Body(
      String job,
      String dataset,
      int batchRows,
      Long seed,
      Boolean shuffle,
      JobMode mode,
      List<String> columns,
      TailPolicy tail,
      Integer blockRows,
      Integer windowBlocks,
      Integer runRows,
      Long leaseTimeoutMs,
      Boolean pinLayout) {
    public Body {
      columns = columns == null ? null : List.copyOf(columns);
    }

    public ObjectNode json() {
      ObjectNode node = Json.object();
      node.put("job", job);
      node.put("dataset", dataset);
      if (mode != null) {
        node.put("mode", mode.wireName());
      }
      if (seed != null) {
        node.put("seed", seed);
      }
      if (shuffle != null) {
        node.put("shuffle", shuffle);
      }
      if (columns != null) {
        ArrayNode array = node.putArray("columns");
        columns.forEach(array::add);
      }
      node.put("batch_rows", batchRows);
      if (tail != null) {
        node.put("tail", tail.wireName());
      }
      if (blockRows != null) {
        node.put("block_rows", blockRows);
      }
      if (windowBlocks != null) {
        node.put("window_blocks", windowBlocks);
      }
      if (runRows != null) {
        node.put("run_rows", runRows);
      }
      if (leaseTimeoutMs != null) {
        node.put("lease_timeout_ms", leaseTimeoutMs);
      }
      if (pinLayout != null) {
        node.put("pin_layout", pinLayout);
      }
      return node;
    }

    public byte[] toJson() {
      return Json.bytes(json());
    }
  }
}
