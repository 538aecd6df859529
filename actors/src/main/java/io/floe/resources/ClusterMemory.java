package io.floe.resources;

import io.floe.iceberg.MemoryNeed;
import io.floe.util.Preconditions;
import io.floe.util.Sizes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * The data nodes' Arrow memory as the cluster shares it, and the admission of loads into it. Each
 * node writes its own figures to a replicated map every couple of seconds and reads everyone's;
 * this node's own figures are read live.
 *
 * <p>A new load is admitted when all it needs ({@link MemoryNeed}: what its slices hold once loaded
 * and what those decoding at once take on top) fits in the data nodes' free memory less what loads
 * admitted before it reserved; with fewer of its slices decoding at once (at least one) when only
 * that fits. The reservation lasts until the load has every slice (or failed, or was dropped), when
 * its memory is in the figures. A load that does not fit while others are in flight waits in a
 * queue (at most {@code queueLength} loads, each at most {@code waitTimeout}) and is decided again
 * each time one of them ends; one that does not fit with none in flight, or could not fit even if
 * they all gave their memory back, is refused at once with what it needs and what is free. So of
 * loads started together, those that fit one after another are admitted and the rest refused,
 * whatever the order their slices would have raced in.
 *
 * <p>Reservations are this node's: loads whose dataset entities live on other nodes count here only
 * through the figures those nodes share once their slices allocate (seconds old), so loads started
 * at the same moment through entities on different nodes can still both be admitted. Only plans
 * with a floor are reserved for (a filtered load's is unknown: admitted as before, and it fails in
 * a slice if memory runs out).
 */
public final class ClusterMemory {
  private static final Key<LWWMap<String, NodeMemory>> KEY = LWWMapKey.create("floe-node-memory");
  private static final Duration PUBLISH_EVERY = Duration.ofSeconds(2);
  private static final String DATA_ROLE = "data";

  private final BufferAllocator root;
  private final int loadThreads;
  private final int queueLength;
  private final Duration waitTimeout;
  private volatile Map<String, NodeMemory> nodes = Map.of();
  private volatile ActorSystem<?> system;

  /** Admitted loads still loading, by {@link #key}, and what each reserved. */
  private final Map<String, MemoryNeed> reserved = new LinkedHashMap<>();

  /**
   * Loads waiting for the ones in flight, in the order they came; all are decided again, in that
   * order, each time one in flight ends (one that fits then goes ahead of a larger one before it).
   */
  private final Map<String, Waiting> queue = new LinkedHashMap<>();

  /**
   * For the node whose Arrow memory is {@code root}, which decodes slices on {@code loadThreads}
   * threads.
   *
   * @param queueLength how many loads may wait for memory at once; more are refused
   * @param waitTimeout how long a load waits for memory before it is refused
   */
  public ClusterMemory(
      BufferAllocator root, int loadThreads, int queueLength, Duration waitTimeout) {
    Preconditions.checkArgument(
        loadThreads > 0, "Invalid load threads: %s (must be > 0)", loadThreads);
    Preconditions.checkArgument(
        queueLength >= 0, "Invalid admission queue length: %s (must be >= 0)", queueLength);
    Preconditions.checkArgument(
        !waitTimeout.isNegative(),
        "Invalid admission wait timeout: %s (must be >= 0)",
        waitTimeout);
    this.root = root;
    this.loadThreads = loadThreads;
    this.queueLength = queueLength;
    this.waitTimeout = waitTimeout;
  }

  /** Starts sharing this node's memory and hearing the others'. */
  public void start(ActorSystem<?> system) {
    this.system = system;
    system.systemActorOf(sharing(), "floe-cluster-memory", Props.empty());
  }

  /**
   * How many slices of a load decode at once: {@code loadsPerDataset}, at most the data nodes' load
   * threads (each node's taken as this one's).
   */
  public int slicesAtOnce(int loadsPerDataset) {
    ActorSystem<?> cluster = system;
    int dataNodes = cluster == null ? 1 : Math.max(1, upDataNodes(cluster).size());
    return Math.min(loadsPerDataset, loadThreads * dataNodes);
  }

  /** How a load's admission was decided. */
  public sealed interface Admission {
    /**
     * Admitted: {@code need} is reserved until {@link #release}. It may have fewer slices decoding
     * at once than asked for: as many as fit, at least one; the load dispatches no more.
     */
    record Admitted(MemoryNeed need) implements Admission {}

    /** Waiting for loads in flight; the decision comes later, to the listener given. */
    record Queued(String reason) implements Admission {}

    /** Refused, and why: what it needs and what is free, in bytes and as people read them. */
    record Refused(String reason) implements Admission {}
  }

  /**
   * Admits, queues or refuses the load of {@code dataset} (its {@code generation}) that needs
   * {@code need}. A queued load's decision ({@link Admission.Admitted} or {@link
   * Admission.Refused}) is given to {@code later}, on another thread, unless it is released first.
   * A load needing nothing known is admitted with nothing reserved, and so is every load while no
   * data node's memory is known yet.
   */
  public Admission admit(
      String dataset, long generation, MemoryNeed need, Consumer<Admission> later) {
    String key = key(dataset, generation);
    Admission decided;
    synchronized (this) {
      if (need.total() <= 0) {
        return new Admission.Admitted(need);
      }
      decided = decide(dataset, need);
      if (decided instanceof Admission.Queued && queue.size() >= queueLength) {
        decided =
            new Admission.Refused(
                shortage(dataset, need.withSlicesAtOnce(1), figures())
                    + String.format(
                        "; %d loads already wait for memory (floe.memory.admission.queue-length)",
                        queue.size()));
      }
      if (decided instanceof Admission.Admitted admitted) {
        reserved.put(key, admitted.need());
      } else if (decided instanceof Admission.Queued) {
        queue.put(key, new Waiting(dataset, need, later));
        scheduleTimeout(key);
      }
    }
    return decided;
  }

  /**
   * Ends the reservation (or the wait) of a load of {@code dataset}: it has every slice, failed or
   * was dropped. Loads waiting are decided again. Nothing happens for a load not admitted here.
   */
  public void release(String dataset, long generation) {
    String key = key(dataset, generation);
    List<Runnable> decisions = new ArrayList<>();
    synchronized (this) {
      boolean ended = reserved.remove(key) != null;
      queue.remove(key);
      if (ended) {
        for (Map.Entry<String, Waiting> entry : new ArrayList<>(queue.entrySet())) {
          Waiting waiting = entry.getValue();
          Admission decided = decide(waiting.dataset(), waiting.need());
          if (decided instanceof Admission.Queued) {
            continue;
          }
          queue.remove(entry.getKey());
          if (decided instanceof Admission.Admitted admitted) {
            reserved.put(entry.getKey(), admitted.need());
          }
          decisions.add(() -> waiting.later().accept(decided));
        }
      }
    }
    decisions.forEach(Runnable::run);
  }

  /** What loads admitted here have reserved and not yet settled. */
  public synchronized long reservedBytes() {
    return reserved.values().stream().mapToLong(MemoryNeed::total).sum();
  }

  /**
   * Admitted when {@code need} fits in the free memory less the reservations, with as many of its
   * slices decoding at once as fit (at least one); refused when no load is in flight (the figures
   * are what they will stay) or it could not fit even if every load in flight gave back what it
   * reserved (or in the nodes' limits); else queued. A load that fits goes ahead of larger ones
   * still waiting. A refusal names the least the load needs: one slice decoding at a time.
   */
  private Admission decide(String dataset, MemoryNeed need) {
    Figures figures = figures();
    if (figures.nodes().isEmpty()) {
      // Nothing known yet: as before any figures were shared.
      return new Admission.Admitted(need);
    }
    long reservations = reserved.values().stream().mapToLong(MemoryNeed::total).sum();
    for (int slices = need.slicesAtOnce(); slices >= 1; slices--) {
      MemoryNeed fewer = need.withSlicesAtOnce(slices);
      if (fewer.total() <= figures.free() - reservations) {
        return new Admission.Admitted(fewer);
      }
    }
    MemoryNeed least = need.withSlicesAtOnce(1);
    String shortage = shortage(dataset, least, figures);
    long couldBeFree = Math.min(figures.limit(), figures.free() + reservations);
    if (reserved.isEmpty() || least.total() > couldBeFree) {
      return new Admission.Refused(shortage);
    }
    return new Admission.Queued(
        String.format(
            "%s; %d load%s in flight reserved %s: it waits for them (at most %s)",
            shortage,
            reserved.size(),
            reserved.size() == 1 ? "" : "s",
            Sizes.readable(reservations),
            duration(waitTimeout)));
  }

  private void scheduleTimeout(String key) {
    ActorSystem<?> cluster = system;
    if (cluster == null) {
      return;
    }
    cluster
        .scheduler()
        .scheduleOnce(
            waitTimeout,
            () -> {
              Waiting waiting;
              Admission refused;
              synchronized (this) {
                waiting = queue.remove(key);
                if (waiting == null) {
                  return;
                }
                refused =
                    new Admission.Refused(
                        shortage(waiting.dataset(), waiting.need().withSlicesAtOnce(1), figures())
                            + String.format(
                                "; it waited %s for %d load%s in flight"
                                    + " (floe.memory.admission.wait-timeout)",
                                duration(waitTimeout),
                                reserved.size(),
                                reserved.size() == 1 ? "" : "s"));
              }
              waiting.later().accept(refused);
            },
            cluster.executionContext());
  }

  /** A duration as the configuration writes it: 10m, 30s, 200ms. */
  private static String duration(Duration duration) {
    if (duration.toMillis() % 60_000 == 0 && !duration.isZero()) {
      return duration.toMinutes() + "m";
    }
    if (duration.toMillis() % 1_000 == 0) {
      return duration.toSeconds() + "s";
    }
    return duration.toMillis() + "ms";
  }

  private static String key(String dataset, long generation) {
    return dataset + "/" + generation;
  }

  private record Waiting(String dataset, MemoryNeed need, Consumer<Admission> later) {}

  /** The up data nodes' memory as known now (this node's live), by address. */
  private record Figures(Map<String, NodeMemory> nodes) {
    long free() {
      return nodes.values().stream().mapToLong(NodeMemory::free).sum();
    }

    long limit() {
      return nodes.values().stream().mapToLong(NodeMemory::limit).sum();
    }
  }

  private Figures figures() {
    ActorSystem<?> cluster = system;
    if (cluster == null) {
      return new Figures(Map.of());
    }
    Cluster members = Cluster.get(cluster);
    String self = members.selfMember().address().toString();
    Map<String, NodeMemory> known = new TreeMap<>();
    for (String address : upDataNodes(cluster)) {
      NodeMemory memory =
          address.equals(self)
              ? new NodeMemory(root.getAllocatedMemory(), root.getLimit())
              : nodes.get(address);
      if (memory != null) {
        known.put(address, memory);
      }
    }
    return new Figures(known);
  }

  /** What a load needs and what each node has free, in bytes and as people read them. */
  private static String shortage(String dataset, MemoryNeed need, Figures figures) {
    String each =
        figures.nodes().entrySet().stream()
            .map(
                node ->
                    String.format(
                        "%s %s free of its %s memory limit",
                        node.getKey(),
                        Sizes.exactly(node.getValue().free()),
                        Sizes.readable(node.getValue().limit())))
            .collect(Collectors.joining(", "));
    int count = figures.nodes().size();
    return String.format(
        "Dataset '%s' needs at least %s of Arrow memory to load: %s held once loaded (%,d rows"
            + " of its columns' fixed-size values and offsets, from the table's metadata;"
            + " strings' bytes come on top) and %s while %d slice%s decode%s%s (each 3 times a"
            + " slice of about %s and a batch of %s); the %d data node%s up ha%s %s free: %s"
            + " (floe.memory.limit, FLOE_MEMORY_LIMIT). Drop datasets, load fewer columns or"
            + " rows, or add nodes or memory",
        dataset,
        Sizes.exactly(need.total()),
        Sizes.readable(need.bytes()),
        need.rows(),
        Sizes.readable(need.transientBytes()),
        need.slicesAtOnce(),
        need.slicesAtOnce() == 1 ? "" : "s",
        need.slicesAtOnce() == 1 ? "s" : "",
        need.copies() == 1 ? "" : String.format(", %d copies of each", need.copies()),
        Sizes.readable(need.sliceBytes()),
        Sizes.readable(need.batchBytes()),
        count,
        count == 1 ? "" : "s",
        count == 1 ? "s" : "ve",
        Sizes.exactly(figures.free()),
        each);
  }

  private static Set<String> upDataNodes(ActorSystem<?> system) {
    Set<String> up = new java.util.HashSet<>();
    Cluster.get(system)
        .state()
        .getMembers()
        .forEach(
            member -> {
              if (member.status() == MemberStatus.up() && member.hasRole(DATA_ROLE)) {
                up.add(member.address().toString());
              }
            });
    return up;
  }

  /**
   * What the sharing actor hears: only from itself and the local replicator, never over the wire
   * (tests that serialize every message would otherwise fail on its timer).
   */
  private interface Message extends org.apache.pekko.actor.NoSerializationVerificationNeeded {}

  private enum Publish implements Message {
    INSTANCE
  }

  private record Heard(Replicator.SubscribeResponse<LWWMap<String, NodeMemory>> response)
      implements Message {}

  private record Written(Replicator.UpdateResponse<LWWMap<String, NodeMemory>> response)
      implements Message {}

  private Behavior<Message> sharing() {
    return Behaviors.setup(
        context ->
            DistributedData.withReplicatorMessageAdapter(
                (ReplicatorMessageAdapter<Message, LWWMap<String, NodeMemory>> replicator) ->
                    Behaviors.withTimers(
                        timers -> {
                          SelfUniqueAddress self =
                              DistributedData.get(context.getSystem()).selfUniqueAddress();
                          String address =
                              Cluster.get(context.getSystem()).selfMember().address().toString();
                          replicator.subscribe(KEY, Heard::new);
                          timers.startTimerWithFixedDelay(Publish.INSTANCE, PUBLISH_EVERY);
                          context.getSelf().tell(Publish.INSTANCE);
                          return Behaviors.receive(Message.class)
                              .onMessageEquals(
                                  Publish.INSTANCE,
                                  () -> {
                                    NodeMemory memory =
                                        new NodeMemory(root.getAllocatedMemory(), root.getLimit());
                                    if (!memory.equals(nodes.get(address))) {
                                      replicator.askUpdate(
                                          replyTo ->
                                              new Replicator.Update<>(
                                                  KEY,
                                                  LWWMap.create(),
                                                  Replicator.writeLocal(),
                                                  replyTo,
                                                  map -> map.put(self, address, memory)),
                                          Written::new);
                                    }
                                    return Behaviors.same();
                                  })
                              .onMessage(
                                  Heard.class,
                                  heard -> {
                                    if (heard.response()
                                        instanceof
                                        Replicator.Changed<LWWMap<String, NodeMemory>> changed) {
                                      nodes = Map.copyOf(changed.get(KEY).getEntries());
                                    }
                                    return Behaviors.same();
                                  })
                              .onMessage(Written.class, written -> Behaviors.same())
                              .build();
                        })));
  }
}
