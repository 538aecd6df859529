package io.floe.gateway.server;

import io.floe.gateway.ShardingQuorum;
import io.floe.protocol.ClusterViewReply;
import io.floe.store.SliceStore;
import java.util.List;
import java.util.stream.StreamSupport;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.pekko.actor.typed.ActorSystem;
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

  ClusterViewReply reply() {
    return new ClusterViewReply(
        cluster.selfMember().address().toString(),
        StreamSupport.stream(cluster.state().getMembers().spliterator(), false)
            .map(
                member ->
                    new ClusterViewReply.Member(
                        member.address().toString(),
                        member.status().toString(),
                        List.copyOf(member.getRoles())))
            .toList(),
        cluster.state().getUnreachable().stream().map(m -> m.address().toString()).toList(),
        quorum.up(),
        quorum.minimum(),
        quorum.shortfall().orElse(null),
        // This node's own memory: what its slices and open streams hold of its Arrow limit.
        new ClusterViewReply.Memory(memory.getAllocatedMemory(), memory.getLimit(), slices.size()));
  }
}
