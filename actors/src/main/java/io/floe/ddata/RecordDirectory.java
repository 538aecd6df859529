package io.floe.ddata;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.UnaryOperator;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;

/**
 * The replicated records of one kind of entity that outlives its node (datasets, jobs): a
 * Distributed Data map from entity id to record, read and written at a majority of the nodes. An
 * entity reads its record when it starts ({@link RecordRecovery}) and writes it when it changes;
 * each answer arrives as a message of the entity's own.
 *
 * @param <V> the record type
 */
public final class RecordDirectory<V> {
  /** Turns a read's outcome into the entity's message. */
  @FunctionalInterface
  public interface ReadOutcome<C, V> {
    /**
     * @param record the entry, or null if the map has none (or the read failed)
     * @param failed the read did not reach the consistency it asked for
     * @param local the read was of this node's replica only
     */
    C of(V record, boolean failed, boolean local);
  }

  /** How far a write got. */
  public enum Written {
    /** A majority of the nodes has the change: it survives the loss of any minority. */
    MAJORITY,
    /**
     * Not confirmed by a majority in time: this node's replica has it and gossip spreads it, but
     * losing this node now could lose it.
     */
    THIS_NODE,
    /** Not applied: the change failed, or the durable store refused it. */
    FAILED
  }

  /** Turns a write's outcome into the entity's message. */
  @FunctionalInterface
  public interface WriteOutcome<C> {
    C of(Written written);
  }

  private final Key<LWWMap<String, V>> key;
  private final Duration timeout;

  private RecordDirectory(String name, Duration timeout) {
    this.key = LWWMapKey.create(name);
    this.timeout = timeout;
  }

  /**
   * @param name the Distributed Data key (durable nodes keep it on disk under this name)
   * @param timeout how long a majority read or write waits for the other nodes
   */
  public static <V> RecordDirectory<V> named(String name, Duration timeout) {
    return new RecordDirectory<>(name, timeout);
  }

  public String name() {
    return key.id();
  }

  /** Reads the record of {@code id}, from a majority or (with {@code localOnly}) this node. */
  public <C> void read(
      ReplicatorMessageAdapter<C, LWWMap<String, V>> replicator,
      String id,
      boolean localOnly,
      ReadOutcome<C, V> outcome) {
    Replicator.ReadConsistency consistency =
        localOnly ? Replicator.readLocal() : new Replicator.ReadMajority(timeout);
    replicator.askGet(
        askReplyTo -> new Replicator.Get<>(key, consistency, askReplyTo),
        response -> {
          if (response instanceof Replicator.GetSuccess<LWWMap<String, V>> found) {
            return outcome.of(found.get(key).getEntries().get(id), false, localOnly);
          }
          return outcome.of(null, !(response instanceof Replicator.NotFound), localOnly);
        });
  }

  /**
   * Writes the record of {@code id} at a majority.
   *
   * @param record the record to keep, from the one the map holds now (or null)
   */
  public <C> void write(
      ReplicatorMessageAdapter<C, LWWMap<String, V>> replicator,
      SelfUniqueAddress node,
      String id,
      UnaryOperator<V> record,
      WriteOutcome<C> outcome) {
    update(replicator, map -> map.put(node, id, record.apply(map.getEntries().get(id))), outcome);
  }

  /** Removes the record of {@code id} at a majority, so the entity does not come back. */
  public <C> void remove(
      ReplicatorMessageAdapter<C, LWWMap<String, V>> replicator,
      SelfUniqueAddress node,
      String id,
      WriteOutcome<C> outcome) {
    update(replicator, map -> map.remove(node, id), outcome);
  }

  private <C> void update(
      ReplicatorMessageAdapter<C, LWWMap<String, V>> replicator,
      UnaryOperator<LWWMap<String, V>> change,
      WriteOutcome<C> outcome) {
    replicator.askUpdate(
        askReplyTo ->
            new Replicator.Update<>(
                key, LWWMap.create(), new Replicator.WriteMajority(timeout), askReplyTo, change),
        response ->
            outcome.of(
                response instanceof Replicator.UpdateSuccess
                    ? Written.MAJORITY
                    : response instanceof Replicator.UpdateTimeout
                        ? Written.THIS_NODE
                        : Written.FAILED));
  }

  /** Every record, by id, as a majority of the nodes knows them (for listings outside entities). */
  public CompletionStage<Map<String, V>> readAll(ActorSystem<?> system) {
    return AskPattern.<Replicator.Command, Replicator.GetResponse<LWWMap<String, V>>>ask(
            DistributedData.get(system).replicator(),
            replyTo -> new Replicator.Get<>(key, new Replicator.ReadMajority(timeout), replyTo),
            timeout.plusSeconds(1),
            system.scheduler())
        .thenApply(
            response -> {
              if (response instanceof Replicator.GetSuccess<LWWMap<String, V>> found) {
                return found.get(key).getEntries();
              }
              if (response instanceof Replicator.NotFound<?>) {
                return Map.of();
              }
              throw new IllegalStateException(
                  "The '"
                      + name()
                      + "' directory could not be read from a majority of the nodes: "
                      + response);
            });
  }
}
