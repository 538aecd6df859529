package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/**
 * The answer to {@code lease} (dynamic mode): a batch leased to the worker, {@code wait} (every
 * batch is leased, some not yet acknowledged) or {@code done} (every batch of the epoch is
 * acknowledged). {@code status} names which on the wire.
 */
public sealed interface LeaseReply {
  /**
   * Global batch {@code batch} of {@code epoch}, {@code rows} rows, held as lease {@code lease}.
   */
  record Leased(String lease, long epoch, long batch, long rows) implements LeaseReply {
    public Leased {
      Objects.requireNonNull(lease, "lease");
    }
  }

  /** Ask again after {@code retryMillis}. */
  record Wait(long retryMillis) implements LeaseReply {}

  /** Every batch of the epoch is acknowledged. */
  record Done() implements LeaseReply {}

  default byte[] encode() {
    ObjectNode node = Json.object();
    if (this instanceof Leased leased) {
      node.put("status", "leased");
      node.put("lease", leased.lease());
      node.put("epoch", leased.epoch());
      node.put("batch", leased.batch());
      node.put("rows", leased.rows());
    } else if (this instanceof Wait wait) {
      node.put("status", "wait");
      node.put("retry_ms", wait.retryMillis());
    } else {
      node.put("status", "done");
    }
    return Json.bytes(node);
  }

  static LeaseReply parse(byte[] body) {
    JsonNode node = Json.parseReply(body, "lease answer");
    if (!node.isObject()) {
      throw new IllegalArgumentException("Invalid lease answer: expected a JSON object");
    }
    Fields fields = Fields.lenient((ObjectNode) node, "lease answer");
    String status = fields.requiredString("status");
    return switch (status) {
      case "leased" ->
          new Leased(
              fields.requiredString("lease"),
              fields.requiredLong("epoch"),
              fields.requiredLong("batch"),
              fields.requiredLong("rows"));
      case "wait" -> new Wait(fields.requiredLong("retry_ms"));
      case "done" -> new Done();
      default ->
          throw new IllegalArgumentException(
              "Unknown status '" + status + "' in lease answer (leased, wait or done)");
    };
  }
}
