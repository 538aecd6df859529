package io.floe.resources;

import io.floe.store.MemoryAdmissionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * The data nodes' Arrow memory as the cluster shares it: each node writes its own to a replicated
 * map every couple of seconds and reads everyone's, so that a dataset about to load can be refused
 * at once, with numbers, when the nodes have less free memory than the least it takes, rather than
 * failing half-way with its slices loaded in vain. The figures are seconds old and slices are
 * placed by sharding, so only a load that cannot fit in the sum of the free memory is refused.
 */
public final class ClusterMemory {
  private static final Key<LWWMap<String, NodeMemory>> KEY = LWWMapKey.create("floe-node-memory");
  private static final Duration PUBLISH_EVERY = Duration.ofSeconds(2);
  private static final String DATA_ROLE = "data";

  private final BufferAllocator root;
  private volatile Map<String, NodeMemory> nodes = Map.of();
  private volatile ActorSystem<?> system;

  /** For the node whose Arrow memory is {@code root}. */
  public ClusterMemory(BufferAllocator root) {
    this.root = root;
  }

  /** Starts sharing this node's memory and hearing the others'. */
  public void start(ActorSystem<?> system) {
    this.system = system;
    system.systemActorOf(sharing(), "floe-cluster-memory", Props.empty());
  }

  /**
   * Refuses a load of {@code dataset} that needs at least {@code floorBytes} (over {@code rows}
   * rows) when the data nodes that are up have less free memory in all; admits it when nothing is
   * known yet.
   *
   * @throws MemoryAdmissionException naming what the dataset needs, each node's free memory and the
   *     limit
   */
  public void admit(String dataset, long floorBytes, long rows) {
    ActorSystem<?> cluster = system;
    if (cluster == null || floorBytes <= 0) {
      return;
    }
    Set<String> up = upDataNodes(cluster);
    List<String> known = new ArrayList<>();
    long free = 0;
    for (Map.Entry<String, NodeMemory> node : nodes.entrySet()) {
      if (up.contains(node.getKey())) {
        known.add(node.getKey());
        free += node.getValue().free();
      }
    }
    if (known.isEmpty() || floorBytes <= free) {
      return;
    }
    known.sort(null);
    String each =
        known.stream()
            .map(
                address -> {
                  NodeMemory memory = nodes.get(address);
                  return String.format(
                      "%s %s free of its %s memory limit",
                      address, bytes(memory.free()), bytes(memory.limit()));
                })
            .collect(Collectors.joining(", "));
    throw new MemoryAdmissionException(
        String.format(
            "Dataset '%s' needs at least %s of Arrow memory (%,d rows of its columns' fixed-size"
                + " values and offsets, from the table's metadata; strings' bytes come on top),"
                + " and the %d data node%s up ha%s %s free in all: %s (floe.memory.limit,"
                + " FLOE_MEMORY_LIMIT). Drop datasets, load fewer columns or rows, or add nodes"
                + " or memory",
            dataset,
            bytes(floorBytes),
            rows,
            known.size(),
            known.size() == 1 ? "" : "s",
            known.size() == 1 ? "s" : "ve",
            bytes(free),
            each));
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

  /** A size as people read it: 1.5 GiB, 300.0 MiB, 12 KiB. */
  static String bytes(long bytes) {
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
      return bytes + " B";
    }
    double value = bytes;
    int unit = -1;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format("%.1f %s", value, units[unit]);
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
