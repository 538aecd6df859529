package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.tenant.Owner;

/**
 * The {@code owner} object of dataset and job statuses: {@code {"tenant": ..., "caller": ...}},
 * without {@code caller} for what was loaded or registered before owners were kept.
 */
final class Owners {
  private Owners() {}

  static void put(ObjectNode node, Owner owner) {
    if (owner == null) {
      return;
    }
    ObjectNode written = node.putObject("owner");
    written.put("tenant", owner.tenant());
    if (owner.caller() != null) {
      written.put("caller", owner.caller());
    }
  }

  /** The owner in {@code node}, or null when it has none (an ABSENT dataset, an older node). */
  static Owner parse(ObjectNode node, String what) {
    ObjectNode owner = Fields.lenient(node, what).optionalObject("owner");
    if (owner == null) {
      return null;
    }
    Fields fields = Fields.lenient(owner, what + " owner");
    return new Owner(fields.requiredString("tenant"), fields.optionalString("caller"));
  }
}
