package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;

/**
 * Why a dataset load or a refresh failed, as a status carries it in {@code error}: {@code kind} is
 * the failure's kind ({@code RESOURCE_EXHAUSTED}, {@code NOT_FOUND}, ...), {@code message} says
 * what was wrong for a person.
 */
public record ErrorReply(String kind, String message) {
  public ErrorReply {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(message, "message");
  }

  ObjectNode encode() {
    ObjectNode node = Json.object();
    node.put("kind", kind);
    node.put("message", message);
    return node;
  }

  static ErrorReply parse(ObjectNode node, String what) {
    Fields fields = Fields.lenient(node, what);
    return new ErrorReply(fields.requiredString("kind"), fields.requiredString("message"));
  }
}
