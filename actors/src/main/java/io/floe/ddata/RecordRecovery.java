package io.floe.ddata;

import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;

/**
 * How an entity that outlives its node (a dataset, a job) starts: it reads its record from a
 * majority of the nodes, stashing every message meanwhile; when no majority answers (nodes starting
 * or leaving) it takes this node's replica, which gossip keeps close to the others; then it becomes
 * what its record says and takes the stashed messages in order.
 */
public final class RecordRecovery {
  private RecordRecovery() {}

  /** The entity's own message carrying a read's outcome (a record implementing this). */
  public interface Read<V> {
    /** The entry, or null if the map has none (or the read failed). */
    V record();

    /** The read did not reach the consistency it asked for. */
    boolean failed();

    /** The read was of this node's replica only. */
    boolean local();
  }

  /** What the entity becomes once its record is known. */
  @FunctionalInterface
  public interface Start<C, V> {
    /**
     * @param record the entity's record, or null when it has none
     * @param unreadable not even this node's replica could be read: the entity starts empty
     */
    Behavior<C> start(V record, boolean unreadable);
  }

  /**
   * @param commands the entity's message type
   * @param reads the entity's message carrying a read's outcome
   * @param toRead makes that message (its record's constructor)
   */
  @SuppressWarnings("unchecked") // reads is the entity's message implementing Read<V>
  public static <C, V> Behavior<C> recover(
      Class<C> commands,
      StashBuffer<C> stash,
      ReplicatorMessageAdapter<C, LWWMap<String, V>> replicator,
      RecordDirectory<V> directory,
      String id,
      Class<? extends C> reads,
      RecordDirectory.ReadOutcome<C, V> toRead,
      Start<C, V> start) {
    directory.read(replicator, id, false, toRead);
    return Behaviors.receive(commands)
        .onMessage(
            reads,
            message -> {
              Read<V> read = (Read<V>) message;
              if (read.failed() && !read.local()) {
                directory.read(replicator, id, true, toRead);
                return Behaviors.same();
              }
              return stash.unstashAll(start.start(read.record(), read.failed()));
            })
        .onMessage(
            commands,
            message -> {
              stash.stash(message);
              return Behaviors.same();
            })
        .build();
  }
}
