package io.floe.gateway.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.gateway.ShardingQuorum;
import io.floe.protocol.Json;
import io.floe.store.SliceStore;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * The cluster's members as this node sees them, and this node's memory, for the {@code cluster}
 * action.
 */
final class ClusterView {
  private final Cluster cluster;
  private final ShardingQuorum quorum;
  private final BufferAllocator memory;
  private final SliceStore slices;

  ClusterView(
      ActorSystem<?> system, ShardingQuorum quorum, BufferAllocator memory, SliceStore slices) {
    this.cluster = Cluster.get(system);
    this.quorum = quorum;
    this.memory = memory;
    this.slices = slices;
  }

  ObjectNode toJson() {
    ObjectNode node = Json.object();
    node.put("self", cluster.selfMember().address().toString());
    ArrayNode members = node.putArray("members");
    for (Member member : cluster.state().getMembers()) {
      ObjectNode entry = members.addObject();
      entry.put("address", member.address().toString());
      entry.put("status", member.status().toString());
      ArrayNode roles = entry.putArray("roles");
      member.getRoles().forEach(roles::add);
    }
    ArrayNode unreachable = node.putArray("unreachable");
    cluster.state().getUnreachable().forEach(m -> unreachable.add(m.address().toString()));
    node.put("data_nodes_up", quorum.up());
    node.put("min_data_nodes", quorum.minimum());
    quorum.shortfall().ifPresent(why -> node.put("warning", why));
    // This node's own memory: what its slices and open streams hold of its Arrow limit.
    ObjectNode own = node.putObject("memory");
    own.put("arrow_allocated_bytes", memory.getAllocatedMemory());
    own.put("arrow_limit_bytes", memory.getLimit());
    own.put("slices_held", slices.size());
    return node;
  }
}
