package io.floe.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.sharding.ShardCoordinator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Await;
import scala.concurrent.Future;
import scala.concurrent.duration.Duration;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The copies of a slice go to different nodes: a shard never joins one of its partners while
 * another node is free of them, rebalancing keeps only moves that have somewhere to go, and later
 * copies sharing a node with their first copy move away once another node can take them.
 */
class SeparatedCopiesTest {
  private static ActorTestKit kit;
  private static ActorRef a;
  private static ActorRef b;
  private static ActorRef c;

  @BeforeAll
  static void regions() {
    kit = ActorTestKit.create();
    a = Adapter.toClassic(kit.createTestProbe().ref());
    b = Adapter.toClassic(kit.createTestProbe().ref());
    c = Adapter.toClassic(kit.createTestProbe().ref());
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  /** Sharding's placement in miniature: the region with the fewest shards; proposes {@code p}. */
  private static ShardCoordinator.ShardAllocationStrategy least(Set<String> proposal) {
    return new ShardCoordinator.ShardAllocationStrategy() {
      @Override
      public Future<ActorRef> allocateShard(
          ActorRef requester,
          String shardId,
          scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
        ActorRef fewest = null;
        for (Map.Entry<ActorRef, IndexedSeq<String>> region :
            CollectionConverters.asJava(current).entrySet()) {
          if (fewest == null
              || region.getValue().size() < current.apply(fewest).size()
              || (region.getValue().size() == current.apply(fewest).size()
                  && region.getKey().path().name().compareTo(fewest.path().name()) < 0)) {
            fewest = region.getKey();
          }
        }
        return Future.successful(fewest);
      }

      @Override
      public Future<scala.collection.immutable.Set<String>> rebalance(
          scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current,
          scala.collection.immutable.Set<String> inProgress) {
        return Future.successful(
            scala.collection.immutable.Set.from(CollectionConverters.asScala(proposal)));
      }
    };
  }

  private static scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> regions(
      Map<ActorRef, List<String>> shards) {
    Map<ActorRef, IndexedSeq<String>> out = new LinkedHashMap<>();
    shards.forEach(
        (region, ids) ->
            out.put(
                region, scala.collection.immutable.Vector.from(CollectionConverters.asScala(ids))));
    return scala.collection.immutable.Map.from(CollectionConverters.asScala(out));
  }

  /** The shards a rebalance with none in progress moves. */
  private static Set<String> rebalanced(
      SeparatedCopies strategy,
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current)
      throws Exception {
    return CollectionConverters.asJava(
        await(
            strategy.rebalance(
                current,
                scala.collection.immutable.Set.from(
                    CollectionConverters.asScala(Set.<String>of())))));
  }

  private static <T> T await(Future<T> future) throws Exception {
    return Await.result(future, Duration.apply(5, "s"));
  }

  @Test
  void aCopyNeverJoinsItsFirstCopyWhileAnotherNodeIsFree() throws Exception {
    SeparatedCopies strategy = new SeparatedCopies(least(Set.of()), 20);
    // a has the fewest shards, but it holds shard 7, whose copies live in 7~1.
    var current = regions(Map.of(a, List.of("7"), b, List.of("1", "2"), c, List.of("3", "4")));

    assertThat(await(strategy.allocateShard(a, "7~1", current))).isIn(b, c);
    assertThat(await(strategy.allocateShard(a, "8", current))).isEqualTo(a);
  }

  @Test
  void withOneNodeTheCopiesShareIt() throws Exception {
    SeparatedCopies strategy = new SeparatedCopies(least(Set.of()), 20);

    assertThat(await(strategy.allocateShard(a, "7~1", regions(Map.of(a, List.of("7"))))))
        .isEqualTo(a);
  }

  @Test
  void aRebalanceKeepsOnlyMovesWithSomewhereToGo() throws Exception {
    // b is the fullest; the proposal moves 5 (whose copy is on the only emptier node, a) and 6.
    SeparatedCopies strategy = new SeparatedCopies(least(Set.of("5", "6")), 20);
    var current =
        regions(
            Map.of(a, List.of("5~1"), b, List.of("5", "6", "9", "10"), c, List.of("1", "2", "3")));

    assertThat(rebalanced(strategy, current)).containsExactly("6");
  }

  @Test
  void laterCopiesLeaveTheirFirstCopysNodeWhenAnotherJoins() throws Exception {
    SeparatedCopies strategy = new SeparatedCopies(least(Set.of()), 20);
    var current = regions(Map.of(a, List.of("5", "5~1", "6", "6~1"), b, List.of()));

    assertThat(rebalanced(strategy, current)).containsExactlyInAnyOrder("5~1", "6~1");
  }

  @Test
  void copiesOfASliceLiveInPartnerShards() {
    SliceShards shards = new SliceShards(1000);
    String first = shards.shardId("events/1/abc");

    assertThat(shards.shardId(SliceCopies.entityId("events/1/abc", 1))).isEqualTo(first + "~1");
    assertThat(SliceShards.family(first + "~1")).isEqualTo(first);
    assertThat(first)
        .as("the first copy stays where sharding's default put slices")
        .isEqualTo(
            org.apache.pekko.cluster.sharding.ShardRegion.HashCodeMessageExtractor$.MODULE$.shardId(
                "events/1/abc", 1000));
  }
}
