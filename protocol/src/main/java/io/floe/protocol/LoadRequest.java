package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.spec.DatasetSpec;
import io.floe.util.Excerpt;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Set;

/**
 * The body of the {@code load} action: a dataset spec plus whether to answer only once READY.
 *
 * @param untilReady answer when the dataset is READY or FAILED rather than once planned
 * @param latest {@code "snapshot": "latest"}: a dataset of that name already loaded the same way is
 *     refreshed to the table's newest snapshot
 */
public record LoadRequest(DatasetSpec spec, boolean untilReady, boolean latest) {
  public LoadRequest(DatasetSpec spec, boolean untilReady) {
    this(spec, untilReady, false);
  }

  private static final String WHAT = "load action body";
  private static final Set<String> FIELDS =
      Set.of(
          "name",
          "table",
          "catalog",
          "snapshot_id",
          "as_of",
          "columns",
          "filter",
          "batch_rows",
          "replicas",
          "snapshot",
          "wait");

  public static LoadRequest parse(byte[] body) {
    ObjectNode node = Json.parseObject(body, WHAT);
    Fields fields = new Fields(node, WHAT, FIELDS);
    DatasetSpec spec =
        new DatasetSpec(
            fields.requiredDatasetName("name"),
            fields.requiredString("table"),
            fields.optionalString("catalog"),
            fields.optionalLong("snapshot_id"),
            asOfMillis(fields.raw("as_of")),
            fields.optionalStrings("columns"),
            filter(fields.raw("filter")),
            fields.optionalInt("batch_rows", DatasetSpec.BATCH_ROWS_DEFAULT),
            replicas(fields.optionalInt("replicas", 1)));
    String snapshot = fields.optionalString("snapshot");
    if (snapshot != null && !snapshot.equals("latest")) {
      throw new IllegalArgumentException(
          "Field 'snapshot' in "
              + WHAT
              + " must be \"latest\" (use snapshot_id or as_of for another snapshot), got '"
              + Excerpt.of(snapshot)
              + "'");
    }
    if (snapshot != null && (spec.snapshotId() != null || spec.asOfMillis() != null)) {
      throw new IllegalArgumentException(
          "Field 'snapshot' in " + WHAT + " cannot be given with snapshot_id or as_of");
    }
    return new LoadRequest(spec, fields.optionalBoolean("wait", false), snapshot != null);
  }

  /** A spec reads 0 as one copy (records from before replicas); a request must say 1 or more. */
  private static int replicas(int replicas) {
    if (replicas < 1 || replicas > DatasetSpec.REPLICAS_MAX) {
      throw new IllegalArgumentException(
          String.format(
              "Invalid replicas: %d (must be in 1..%d)", replicas, DatasetSpec.REPLICAS_MAX));
    }
    return replicas;
  }

  /**
   * {@code filter} is a string in Floe's filter syntax or an Iceberg expression in its JSON form,
   * given either as an object or as its text.
   */
  private static String filter(JsonNode value) {
    if (value == null || value.isNull()) {
      return null;
    }
    if (value.isTextual()) {
      return value.asText();
    }
    if (value.isObject()) {
      return value.toString();
    }
    throw new IllegalArgumentException(
        "Field 'filter' in "
            + WHAT
            + " must be a filter string or an Iceberg expression object, got "
            + Excerpt.of(value));
  }

  /** {@code as_of} is epoch millis or an ISO-8601 instant such as 2024-05-01T00:00:00Z. */
  private static Long asOfMillis(JsonNode value) {
    if (value == null || value.isNull()) {
      return null;
    }
    if (value.isIntegralNumber()) {
      return value.asLong();
    }
    if (value.isTextual()) {
      try {
        return Instant.parse(value.asText()).toEpochMilli();
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException(
            "Field 'as_of' in "
                + WHAT
                + " is not an ISO-8601 instant: '"
                + Excerpt.of(value.asText())
                + "'");
      }
    }
    throw new IllegalArgumentException(
        "Field 'as_of' in "
            + WHAT
            + " must be epoch millis or an ISO-8601 instant, got "
            + Excerpt.of(value));
  }

  public byte[] toJson() {
    ObjectNode node = Json.object();
    node.put("name", spec.name());
    node.put("table", spec.table());
    if (spec.catalog() != null) {
      node.put("catalog", spec.catalog());
    }
    if (spec.snapshotId() != null) {
      node.put("snapshot_id", spec.snapshotId());
    }
    if (spec.asOfMillis() != null) {
      node.put("as_of", spec.asOfMillis());
    }
    spec.columns().forEach(node.putArray("columns")::add);
    node.put("filter", spec.filter());
    node.put("batch_rows", spec.batchRows());
    if (spec.replicas() != 1) {
      node.put("replicas", spec.replicas());
    }
    if (latest) {
      node.put("snapshot", "latest");
    }
    node.put("wait", untilReady);
    return Json.bytes(node);
  }
}
