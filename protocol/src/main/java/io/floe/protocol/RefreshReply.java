package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A dataset's last refresh, as its status carries it in {@code refresh}.
 *
 * @param state RUNNING, DONE (the new layout serves), UNCHANGED (no newer snapshot) or FAILED
 * @param toSnapshot the snapshot it moved to; null while unknown
 * @param error why it failed (the dataset serves its old snapshot on); else null
 */
public record RefreshReply(
    String state,
    long fromSnapshot,
    Long toSnapshot,
    int slicesKept,
    int slicesLoaded,
    int slicesFreed,
    double seconds,
    ErrorReply error) {
  private static final String WHAT = "refresh report";

  ObjectNode encode() {
    ObjectNode node = Json.object();
    node.put("state", state);
    node.put("from_snapshot", fromSnapshot);
    if (toSnapshot != null) {
      node.put("to_snapshot", toSnapshot);
    }
    node.put("slices_kept", slicesKept);
    node.put("slices_loaded", slicesLoaded);
    node.put("slices_freed", slicesFreed);
    node.put("seconds", seconds);
    if (error != null) {
      node.set("error", error.encode());
    }
    return node;
  }

  static RefreshReply parse(ObjectNode node) {
    Fields fields = Fields.lenient(node, WHAT);
    ObjectNode error = fields.optionalObject("error");
    Double seconds = fields.optionalDouble("seconds");
    return new RefreshReply(
        fields.requiredString("state"),
        fields.requiredLong("from_snapshot"),
        fields.optionalLong("to_snapshot"),
        fields.optionalInt("slices_kept", 0),
        fields.optionalInt("slices_loaded", 0),
        fields.optionalInt("slices_freed", 0),
        seconds == null ? 0 : seconds,
        error == null ? null : ErrorReply.parse(error, WHAT + " error"));
  }
}
