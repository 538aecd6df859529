package io.floe.resources;

import io.floe.iceberg.MemoryNeed;
import io.floe.util.Preconditions;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.pekko.actor.typed.ActorRef;
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
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.SingletonActor;

/**
 * The data nodes' Arrow memory as the cluster shares it, and this node's way to the {@link
 * AdmissionDesk} that admits loads into it. Each node writes its own figures to a replicated map
 * every couple of seconds and reads everyone's (the desk falls back on them for a node that does
 * not answer its asks), runs a reporter the desk asks for this node's figures live, and a proxy to
 * the desk. The desk runs on the oldest node of any role: it counts only data nodes' memory, and
 * where no node has the data role (entities tested on their own) it admits every load.
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
  private volatile ActorRef<AdmissionDesk.Command> desk;

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

  /**
   * Starts sharing this node's memory and hearing the others', its reporter, and the admission
   * desk's singleton (or its proxy, on a node that does not run it).
   */
  public void start(ActorSystem<?> system) {
    this.system = system;
    system.systemActorOf(sharing(), "floe-cluster-memory", Props.empty());
    system.systemActorOf(AdmissionDesk.reporter(this::live), "floe-memory-reporter", Props.empty());
    this.desk =
        ClusterSingleton.get(system)
            .init(
                SingletonActor.of(
                    AdmissionDesk.create(
                        queueLength,
                        waitTimeout,
                        this::live,
                        () -> nodes,
                        () -> upDataNodes(system)),
                    "floe-admission-desk"));
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

  /**
   * Asks the admission desk to admit the load {@code load} of {@code dataset} that needs {@code
   * need} ({@link AdmissionBook}); the decision comes to {@code replyTo}, and the desk ends the
   * load's reservation or wait when {@code holder} stops. Before this node started (an entity
   * tested on its own) every load is admitted as asked.
   */
  public void admit(
      String dataset,
      String load,
      MemoryNeed need,
      ActorRef<AdmissionDesk.Decided> replyTo,
      ActorRef<?> holder) {
    ActorRef<AdmissionDesk.Command> admissions = desk;
    if (admissions == null) {
      replyTo.tell(AdmissionDesk.Decided.of(dataset, load, new Admission.Admitted(need)));
      return;
    }
    admissions.tell(new AdmissionDesk.Admit(dataset, load, need, replyTo, holder));
  }

  /**
   * Ends the reservation (or the wait) of the load {@code load} of {@code dataset}: it has every
   * slice, failed or was dropped. Loads waiting are decided again. Nothing happens for a load not
   * admitted.
   */
  public void release(String dataset, String load) {
    ActorRef<AdmissionDesk.Command> admissions = desk;
    if (admissions != null) {
      admissions.tell(new AdmissionDesk.Release(dataset, load));
    }
  }

  private NodeMemory live() {
    return new NodeMemory(root.getAllocatedMemory(), root.getLimit());
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
                                    NodeMemory memory = live();
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
