package io.floe.ddata;

import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;

/**
 * Reads one entity's record from a replicated map of records by id, as entities that outlive their
 * node (datasets, jobs) do when they start. The answer arrives as a message of the entity's own.
 */
public final class RecordReads {
  private RecordReads() {}

  /** Turns a read's outcome into the entity's message. */
  @FunctionalInterface
  public interface Outcome<C, V> {
    /**
     * @param record the entry, or null if the map has none (or the read failed)
     * @param failed the read did not reach the consistency it asked for
     * @param local the read was of this node's replica only
     */
    C of(V record, boolean failed, boolean local);
  }

  public static <C, V> void ask(
      ReplicatorMessageAdapter<C, LWWMap<String, V>> replicator,
      Key<LWWMap<String, V>> key,
      String id,
      Replicator.ReadConsistency consistency,
      Outcome<C, V> outcome) {
    boolean local = consistency instanceof Replicator.ReadLocal$;
    replicator.askGet(
        askReplyTo -> new Replicator.Get<>(key, consistency, askReplyTo),
        response -> {
          if (response instanceof Replicator.GetSuccess) {
            LWWMap<String, V> map = ((Replicator.GetSuccess<LWWMap<String, V>>) response).get(key);
            return outcome.of(map.getEntries().get(id), false, local);
          }
          return outcome.of(null, !(response instanceof Replicator.NotFound), local);
        });
  }
}
