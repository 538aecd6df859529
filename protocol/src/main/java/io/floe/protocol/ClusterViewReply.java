package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;

/**
 * The answer to {@code cluster}: the cluster's members as the answering node sees them, and that
 * node's own memory (docs/protocol.md, "Actions").
 *
 * @param self the answering node's address
 * @param unreachable addresses of the members the node cannot reach
 * @param warning why sharding may not place slices (fewer data nodes Up than its minimum); else
 *     null
 * @param protocolVersion the protocol version the answering node speaks ({@link #PROTOCOL_VERSION}
 *     for this build; a node that does not say speaks 1)
 */
public record ClusterViewReply(
    String self,
    List<Member> members,
    List<String> unreachable,
    int dataNodesUp,
    int minDataNodes,
    String warning,
    Memory memory,
    int protocolVersion) {
  private static final String WHAT = "cluster view";

  /**
   * The protocol version this build speaks (docs/protocol.md, "Versions"): within a version,
   * changes only add optional reply fields and new actions; a request field, a renamed or removed
   * field, or a changed meaning is a new version.
   */
  public static final int PROTOCOL_VERSION = 2;

  /** This build's answer: {@link #PROTOCOL_VERSION}. */
  public ClusterViewReply(
      String self,
      List<Member> members,
      List<String> unreachable,
      int dataNodesUp,
      int minDataNodes,
      String warning,
      Memory memory) {
    this(self, members, unreachable, dataNodesUp, minDataNodes, warning, memory, PROTOCOL_VERSION);
  }

  /** A member: its address, its status (Up, Joining, Leaving, ...) and roles. */
  public record Member(String address, String status, List<String> roles) {
    public Member {
      roles = List.copyOf(roles);
    }

    public boolean isUp() {
      return "Up".equals(status);
    }
  }

  /** The answering node's Arrow memory: what its slices and open streams hold of its limit. */
  public record Memory(long arrowAllocatedBytes, long arrowLimitBytes, int slicesHeld) {}

  public ClusterViewReply {
    Objects.requireNonNull(self, "self");
    Objects.requireNonNull(memory, "memory");
    members = List.copyOf(members);
    unreachable = List.copyOf(unreachable);
  }

  /** How many members are Up. */
  public long membersUp() {
    return members.stream().filter(Member::isUp).count();
  }

  public byte[] encode() {
    ObjectNode node = Json.object();
    node.put("self", self);
    ArrayNode all = node.putArray("members");
    for (Member member : members) {
      ObjectNode entry = all.addObject();
      entry.put("address", member.address());
      entry.put("status", member.status());
      member.roles().forEach(entry.putArray("roles")::add);
    }
    unreachable.forEach(node.putArray("unreachable")::add);
    node.put("data_nodes_up", dataNodesUp);
    node.put("min_data_nodes", minDataNodes);
    if (warning != null) {
      node.put("warning", warning);
    }
    ObjectNode own = node.putObject("memory");
    own.put("arrow_allocated_bytes", memory.arrowAllocatedBytes());
    own.put("arrow_limit_bytes", memory.arrowLimitBytes());
    own.put("slices_held", memory.slicesHeld());
    node.put("protocol_version", protocolVersion);
    return Json.bytes(node);
  }

  public static ClusterViewReply parse(byte[] body) {
    JsonNode node = Json.parseReply(body, WHAT);
    if (!node.isObject()) {
      throw new IllegalArgumentException("Invalid " + WHAT + ": expected a JSON object");
    }
    Fields fields = Fields.lenient((ObjectNode) node, WHAT);
    ObjectNode memory = fields.optionalObject("memory");
    if (memory == null) {
      throw new IllegalArgumentException("Missing field 'memory' in " + WHAT);
    }
    Fields own = Fields.lenient(memory, WHAT + " memory");
    return new ClusterViewReply(
        fields.requiredString("self"),
        fields.optionalObjects("members").stream()
            .map(
                member -> {
                  Fields entry = Fields.lenient(member, WHAT + " member");
                  return new Member(
                      entry.requiredString("address"),
                      entry.requiredString("status"),
                      entry.optionalStrings("roles"));
                })
            .toList(),
        fields.optionalStrings("unreachable"),
        fields.requiredInt("data_nodes_up"),
        fields.requiredInt("min_data_nodes"),
        fields.optionalString("warning"),
        new Memory(
            own.requiredLong("arrow_allocated_bytes"),
            own.requiredLong("arrow_limit_bytes"),
            own.requiredInt("slices_held")),
        fields.optionalInt("protocol_version", 1));
  }
}
