package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;

/** The answer to {@code ack}: {@code {"status": "acknowledged" | "expired" | "duplicate"}}. */
public enum AckReply {
  /** The batch's current lease (or a timed-out one not handed out again): the batch counts. */
  ACKNOWLEDGED,
  /** The lease timed out and its batch is another worker's now, whose acknowledgement counts. */
  EXPIRED,
  /** The batch was already acknowledged under another lease. */
  DUPLICATE;

  private static final String WHAT = "ack answer";

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public byte[] encode() {
    ObjectNode node = Json.object();
    node.put("status", wireName());
    return Json.bytes(node);
  }

  public static AckReply parse(byte[] body) {
    JsonNode node = Json.parseReply(body, WHAT);
    if (!node.isObject()) {
      throw new IllegalArgumentException("Invalid " + WHAT + ": expected a JSON object");
    }
    String status = Fields.lenient((ObjectNode) node, WHAT).requiredString("status");
    for (AckReply reply : values()) {
      if (reply.wireName().equals(status)) {
        return reply;
      }
    }
    throw new IllegalArgumentException(
        "Unknown status '" + status + "' in " + WHAT + " (acknowledged, expired or duplicate)");
  }
}
