package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Set;

/** The body of {@code status} and {@code drop}: {"name": "..."}. */
public record NameRequest(String name) {
  public static NameRequest parse(byte[] body, String action) {
    String what = action + " action body";
    ObjectNode node = Json.parseObject(body, what);
    return new NameRequest(new Fields(node, what, Set.of("name")).requiredDatasetName("name"));
  }

  public byte[] toJson() {
    ObjectNode node = Json.object();
    node.put("name", name);
    return Json.bytes(node);
  }
}
