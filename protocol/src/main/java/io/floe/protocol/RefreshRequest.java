package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Set;

/**
 * The body of {@code refresh}: {@code {"name": "...", "wait": true}}; with {@code wait} the answer
 * comes once the new layout serves, or the refresh failed.
 */
public record RefreshRequest(String name, boolean untilDone) {
  private static final String WHAT = "refresh action body";

  public static RefreshRequest parse(byte[] body) {
    ObjectNode node = Json.parseObject(body, WHAT);
    Fields fields = new Fields(node, WHAT, Set.of("name", "wait"));
    return new RefreshRequest(
        fields.requiredDatasetName("name"), fields.optionalBoolean("wait", false));
  }

  public byte[] toJson() {
    ObjectNode node = Json.object();
    node.put("name", name);
    node.put("wait", untilDone);
    return Json.bytes(node);
  }
}
