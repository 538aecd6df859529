package io.floe.dataset;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.cluster.sharding.ShardCoordinator;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Future;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Places slice shards as sharding's least-shards strategy does, except that a shard never goes to a
 * node holding one of its partners ({@link SliceShards}): the copies of a slice are on different
 * nodes whenever there are enough of them, so that losing a node loses at most one copy. With fewer
 * nodes than copies the copies share a node (nothing else is possible), and as nodes join, each
 * rebalance moves later copies away from their partners.
 *
 * <p>A rebalance the least-shards strategy proposes is kept only for shards that have somewhere
 * better to go: a shard whose partners occupy every less loaded node stays, so balancing never
 * moves slices back and forth (each move reloads a slice).
 */
final class SeparatedCopies implements ShardCoordinator.ActorSystemDependentAllocationStrategy {
  private final ShardCoordinator.ShardAllocationStrategy least;
  private final int separationsPerRound;

  SeparatedCopies(ShardCoordinator.ShardAllocationStrategy least, int separationsPerRound) {
    this.least = least;
    this.separationsPerRound = separationsPerRound;
  }

  @Override
  public void start(ActorSystem system) {
    if (least instanceof ShardCoordinator.ActorSystemDependentAllocationStrategy dependent) {
      dependent.start(system);
    } else if (least instanceof ShardCoordinator.StartableAllocationStrategy startable) {
      startable.start();
    }
  }

  @Override
  public Future<ActorRef> allocateShard(
      ActorRef requester,
      String shardId,
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
    Map<ActorRef, IndexedSeq<String>> regions = CollectionConverters.asJava(current);
    Set<ActorRef> taken = holdingPartners(shardId, regions);
    if (taken.isEmpty() || taken.size() >= regions.size()) {
      return least.allocateShard(requester, shardId, current);
    }
    return least.allocateShard(
        requester, shardId, current.removedAll(CollectionConverters.asScala(taken)));
  }

  @Override
  public Future<scala.collection.immutable.Set<String>> rebalance(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current,
      scala.collection.immutable.Set<String> inProgress) {
    Map<ActorRef, IndexedSeq<String>> regions = CollectionConverters.asJava(current);
    Set<String> moving = CollectionConverters.asJava(inProgress);
    return least
        .rebalance(current, inProgress)
        .map(
            proposed -> {
              Set<String> kept = new HashSet<>();
              for (String shard : CollectionConverters.asJava(proposed)) {
                if (betterPlaceExists(shard, regions)) {
                  kept.add(shard);
                }
              }
              kept.addAll(separations(regions, moving, kept));
              return scala.collection.immutable.Set.from(CollectionConverters.asScala(kept));
            },
            scala.concurrent.ExecutionContext.parasitic$.MODULE$);
  }

  /** Later copies sharing a node with a partner while another node holds none of their family. */
  private Set<String> separations(
      Map<ActorRef, IndexedSeq<String>> regions, Set<String> moving, Set<String> already) {
    Set<String> out = new HashSet<>();
    for (Map.Entry<ActorRef, IndexedSeq<String>> region : regions.entrySet()) {
      Set<String> families = new HashSet<>();
      for (String shard : CollectionConverters.asJava(region.getValue())) {
        if (!SliceShards.holdsLaterCopies(shard)) {
          families.add(SliceShards.family(shard));
        }
      }
      for (String shard : CollectionConverters.asJava(region.getValue())) {
        if (out.size() >= separationsPerRound) {
          return out;
        }
        if (SliceShards.holdsLaterCopies(shard)
            && families.contains(SliceShards.family(shard))
            && !moving.contains(shard)
            && !already.contains(shard)
            && holdingPartners(shard, regions).size() < regions.size()) {
          out.add(shard);
        }
      }
    }
    return out;
  }

  /** Whether a node other than the shard's own, holding none of its partners, has fewer shards. */
  private static boolean betterPlaceExists(
      String shard, Map<ActorRef, IndexedSeq<String>> regions) {
    Set<ActorRef> taken = holdingPartners(shard, regions);
    if (taken.isEmpty()) {
      return true;
    }
    Map<ActorRef, Integer> counts = new HashMap<>();
    ActorRef home = null;
    for (Map.Entry<ActorRef, IndexedSeq<String>> region : regions.entrySet()) {
      counts.put(region.getKey(), region.getValue().size());
      if (region.getValue().contains(shard)) {
        home = region.getKey();
      }
    }
    if (home == null) {
      return true;
    }
    int homeCount = counts.get(home);
    for (Map.Entry<ActorRef, Integer> region : counts.entrySet()) {
      if (!region.getKey().equals(home)
          && !taken.contains(region.getKey())
          && region.getValue() + 1 < homeCount) {
        return true;
      }
    }
    return false;
  }

  /** The nodes holding another shard of {@code shardId}'s family. */
  static Set<ActorRef> holdingPartners(String shardId, Map<ActorRef, IndexedSeq<String>> regions) {
    String family = SliceShards.family(shardId);
    Set<ActorRef> taken = new HashSet<>();
    for (Map.Entry<ActorRef, IndexedSeq<String>> region : regions.entrySet()) {
      for (String shard : CollectionConverters.asJava(region.getValue())) {
        if (!shard.equals(shardId) && SliceShards.family(shard).equals(family)) {
          taken.add(region.getKey());
          break;
        }
      }
    }
    return taken;
  }
}
