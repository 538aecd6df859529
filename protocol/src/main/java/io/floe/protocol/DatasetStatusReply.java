package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.spec.TableSource;
import io.floe.tenant.Owner;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A dataset's status as {@code load}, {@code status}, {@code drop}, {@code refresh} and (one per
 * dataset) {@code list} answer it (docs/protocol.md, "Status"). The node writes it with {@link
 * #encode}, clients read it with {@link #parse}; fields a reader does not know are left alone.
 *
 * @param source where its table came from, once planned; else null
 * @param snapshotId the snapshot it serves; null before its table is planned
 * @param secondsToReady seconds from the load request to READY; null before that
 * @param decoders how many held slices each reader decoded: native, vectorized, generic, mixed
 * @param refresh its last refresh, or null
 * @param retainedLayouts older layouts kept for the jobs that still read them
 * @param error why it FAILED; else null
 * @param stale the node answered from the last status it had: the dataset's entity is moving
 * @param dropped the answer to {@code drop}: the status the dataset had
 * @param owner the tenant (and caller) that loaded it; null for an ABSENT dataset
 * @param replicas how many nodes hold each slice (0 for an ABSENT dataset)
 */
public record DatasetStatusReply(
    String name,
    State state,
    TableSource source,
    int slicesLoaded,
    int slicesTotal,
    long rows,
    long bytes,
    Long snapshotId,
    Double secondsToReady,
    Map<String, Integer> decoders,
    RefreshReply refresh,
    List<RetainedLayout> retainedLayouts,
    ErrorReply error,
    boolean stale,
    boolean dropped,
    Owner owner,
    int replicas) {
  private static final String WHAT = "dataset status";

  /** A dataset's state; ABSENT answers a name no dataset has. */
  public enum State {
    PLANNING,
    LOADING,
    READY,
    DEGRADED,
    FAILED,
    ABSENT;

    /** READY or FAILED: a load has nothing more to do. */
    public boolean isDone() {
      return this == READY || this == FAILED;
    }
  }

  /** An older layout a job still reads: its snapshot, fingerprint (once known), size, readers. */
  public record RetainedLayout(
      long snapshotId, String fingerprint, int slices, long rows, List<String> heldBy) {
    public RetainedLayout {
      heldBy = List.copyOf(heldBy);
    }
  }

  public DatasetStatusReply {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(state, "state");
    decoders = decoders == null ? Map.of() : Map.copyOf(decoders);
    retainedLayouts = retainedLayouts == null ? List.of() : List.copyOf(retainedLayouts);
  }

  /** This status as {@code status} answers it from the last one the node had. */
  public DatasetStatusReply asStale() {
    return new DatasetStatusReply(
        name,
        state,
        source,
        slicesLoaded,
        slicesTotal,
        rows,
        bytes,
        snapshotId,
        secondsToReady,
        decoders,
        refresh,
        retainedLayouts,
        error,
        true,
        dropped,
        owner,
        replicas);
  }

  /** This status as {@code drop} answers it: the status the dataset had. */
  public DatasetStatusReply asDropped() {
    return new DatasetStatusReply(
        name,
        state,
        source,
        slicesLoaded,
        slicesTotal,
        rows,
        bytes,
        snapshotId,
        secondsToReady,
        decoders,
        refresh,
        retainedLayouts,
        error,
        stale,
        true,
        owner,
        replicas);
  }

  public byte[] encode() {
    return Json.bytes(toNode());
  }

  /** The answer to {@code list}: a JSON array of statuses. */
  public static byte[] encodeList(List<DatasetStatusReply> statuses) {
    ArrayNode array = Json.object().arrayNode();
    statuses.forEach(status -> array.add(status.toNode()));
    return Json.bytes(array);
  }

  public static DatasetStatusReply parse(byte[] body) {
    JsonNode node = Json.parseReply(body, WHAT);
    if (!node.isObject()) {
      throw new IllegalArgumentException("Invalid " + WHAT + ": expected a JSON object");
    }
    return parse((ObjectNode) node);
  }

  public static List<DatasetStatusReply> parseList(byte[] body) {
    JsonNode node = Json.parseReply(body, "dataset list");
    if (!node.isArray()) {
      throw new IllegalArgumentException("Invalid dataset list: expected a JSON array");
    }
    List<DatasetStatusReply> statuses = new ArrayList<>();
    for (JsonNode element : node) {
      if (!element.isObject()) {
        throw new IllegalArgumentException("Invalid dataset list: expected objects only");
      }
      statuses.add(parse((ObjectNode) element));
    }
    return List.copyOf(statuses);
  }

  ObjectNode toNode() {
    ObjectNode node = Json.object();
    node.put("name", name);
    node.put("state", state.name());
    if (source instanceof TableSource.InCatalog inCatalog) {
      ObjectNode table = node.putObject("source");
      table.put("catalog", inCatalog.catalog());
      table.put("table", inCatalog.identifier());
    } else if (source instanceof TableSource.AtLocation atLocation) {
      node.putObject("source").put("location", atLocation.location());
    }
    node.put("slices_loaded", slicesLoaded);
    node.put("slices_total", slicesTotal);
    node.put("rows", rows);
    node.put("bytes", bytes);
    if (snapshotId != null) {
      node.put("snapshot_id", snapshotId);
    }
    if (secondsToReady != null) {
      node.put("seconds_to_ready", secondsToReady);
    }
    if (!decoders.isEmpty()) {
      ObjectNode counts = node.putObject("decoders");
      new TreeMap<>(decoders).forEach(counts::put);
    }
    if (refresh != null) {
      node.set("refresh", refresh.encode());
    }
    if (!retainedLayouts.isEmpty()) {
      ArrayNode retained = node.putArray("retained_layouts");
      for (RetainedLayout layout : retainedLayouts) {
        ObjectNode kept = retained.addObject();
        kept.put("snapshot_id", layout.snapshotId());
        if (layout.fingerprint() != null) {
          kept.put("fingerprint", layout.fingerprint());
        }
        kept.put("slices", layout.slices());
        kept.put("rows", layout.rows());
        layout.heldBy().forEach(kept.putArray("held_by")::add);
      }
    }
    if (error != null) {
      node.set("error", error.encode());
    }
    Owners.put(node, owner);
    if (replicas > 0) {
      node.put("replicas", replicas);
    }
    if (stale) {
      node.put("stale", true);
    }
    if (dropped) {
      node.put("dropped", true);
    }
    return node;
  }

  static DatasetStatusReply parse(ObjectNode node) {
    Fields fields = Fields.lenient(node, WHAT);
    String state = fields.requiredString("state");
    State known;
    try {
      known = State.valueOf(state);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Unknown state '" + state + "' in " + WHAT, e);
    }
    ObjectNode refresh = fields.optionalObject("refresh");
    ObjectNode error = fields.optionalObject("error");
    return new DatasetStatusReply(
        fields.requiredString("name"),
        known,
        source(fields.optionalObject("source")),
        fields.requiredInt("slices_loaded"),
        fields.requiredInt("slices_total"),
        fields.requiredLong("rows"),
        fields.requiredLong("bytes"),
        fields.optionalLong("snapshot_id"),
        fields.optionalDouble("seconds_to_ready"),
        decoders(fields.optionalObject("decoders")),
        refresh == null ? null : RefreshReply.parse(refresh),
        fields.optionalObjects("retained_layouts").stream()
            .map(DatasetStatusReply::retainedLayout)
            .toList(),
        error == null ? null : ErrorReply.parse(error, WHAT + " error"),
        fields.optionalBoolean("stale", false),
        fields.optionalBoolean("dropped", false),
        Owners.parse(node, WHAT),
        // Absent from nodes of before replicas (one copy) and for an ABSENT dataset (none).
        fields.optionalInt("replicas", known == State.ABSENT ? 0 : 1));
  }

  private static TableSource source(ObjectNode node) {
    if (node == null) {
      return null;
    }
    Fields fields = Fields.lenient(node, WHAT + " source");
    String catalog = fields.optionalString("catalog");
    return catalog != null
        ? new TableSource.InCatalog(catalog, fields.requiredString("table"))
        : new TableSource.AtLocation(fields.requiredString("location"));
  }

  private static Map<String, Integer> decoders(ObjectNode node) {
    if (node == null) {
      return Map.of();
    }
    Fields fields = Fields.lenient(node, WHAT + " decoders");
    Map<String, Integer> counts = new LinkedHashMap<>();
    node.fieldNames().forEachRemaining(name -> counts.put(name, fields.requiredInt(name)));
    return counts;
  }

  private static RetainedLayout retainedLayout(ObjectNode node) {
    Fields fields = Fields.lenient(node, WHAT + " retained layout");
    return new RetainedLayout(
        fields.requiredLong("snapshot_id"),
        fields.optionalString("fingerprint"),
        fields.requiredInt("slices"),
        fields.requiredLong("rows"),
        fields.optionalStrings("held_by"));
  }
}
