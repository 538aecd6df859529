package io.floe.dataset;

import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.ShardingEnvelope;
import org.apache.pekko.cluster.sharding.typed.ShardingMessageExtractor;

/**
 * Which shard a slice entity lives in. The first copy of a slice keeps the shard sharding's default
 * would give it (so slices loaded before replicas existed stay where they are), and copy {@code k}
 * lives in that shard's partner {@code shard~k}: every slice whose first copy shares a shard has
 * its other copies share the partners, which {@link SeparatedCopies} keeps on other nodes.
 */
final class SliceShards
    extends ShardingMessageExtractor<ShardingEnvelope<SliceEntity.Command>, SliceEntity.Command> {
  private static final char MARK = '~';
  private final int numberOfShards;

  SliceShards(int numberOfShards) {
    this.numberOfShards = numberOfShards;
  }

  @Override
  public String entityId(ShardingEnvelope<SliceEntity.Command> envelope) {
    return envelope.entityId();
  }

  @Override
  public String shardId(String entityId) {
    String first =
        ShardRegion.HashCodeMessageExtractor$.MODULE$.shardId(
            SliceCopies.sliceOf(entityId), numberOfShards);
    int copy = SliceCopies.copyOf(entityId);
    return copy == 0 ? first : first + MARK + copy;
  }

  @Override
  public SliceEntity.Command unwrapMessage(ShardingEnvelope<SliceEntity.Command> envelope) {
    return envelope.message();
  }

  /** The shards whose slices are copies of one another's: a shard and its partners. */
  static String family(String shardId) {
    int mark = shardId.indexOf(MARK);
    return mark < 0 ? shardId : shardId.substring(0, mark);
  }

  /** Whether a shard holds later copies (not the first) of its slices. */
  static boolean holdsLaterCopies(String shardId) {
    return shardId.indexOf(MARK) >= 0;
  }
}
