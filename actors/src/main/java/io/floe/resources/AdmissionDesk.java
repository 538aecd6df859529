package io.floe.resources;

import io.floe.iceberg.MemoryNeed;
import io.floe.serialization.CborSerializable;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.pekko.actor.NoSerializationVerificationNeeded;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * The one place the cluster admits loads into its memory: a cluster singleton (on the oldest node)
 * that keeps the {@link AdmissionBook}. Each decision is taken on figures asked of every up data
 * node's {@link #REPORTERS reporter} for it (a node that does not answer within {@link #ASK_FOR} is
 * taken at the figures it last shared), one decision at a time; so loads started together through
 * dataset entities on different nodes see each other's reservations and the memory as it is, and
 * the outcome is the same whichever nodes they came through.
 *
 * <p>A dataset entity asks with {@link Admit} and hears {@link Decided}, now or (queued) later; it
 * asks again until it hears an answer other than queued, so a decision lost while the singleton
 * moves is taken again by its successor. The desk watches each load's entity and ends its
 * reservation or wait when the entity stops. What a desk that moves forgets are the reservations of
 * loads in flight; their memory counts again once their slices allocate it.
 */
public final class AdmissionDesk {
  /** Every data node's memory reporter, asked for its figures at each decision. */
  public static final ServiceKey<ReportMemory> REPORTERS =
      ServiceKey.create(ReportMemory.class, "floe-node-memory");

  /** How long the desk waits for a node's figures before taking what it last shared. */
  static final Duration ASK_FOR = Duration.ofSeconds(1);

  /** How often loads waiting for memory are decided again though no reservation ended. */
  static final Duration RECHECK_EVERY = Duration.ofSeconds(2);

  private static final int STASH = 10_000;

  /** What the desk hears. */
  public interface Command {}

  /**
   * Admit the load {@code load} of {@code dataset} (its generation, or a refresh of it), needing
   * {@code need}; the decision goes to {@code replyTo}, and {@code holder} (the dataset entity) is
   * watched.
   */
  public record Admit(
      String dataset, String load, MemoryNeed need, ActorRef<Decided> replyTo, ActorRef<?> holder)
      implements Command, CborSerializable {}

  /** The load {@code load} of {@code dataset} has every slice, failed or was dropped. */
  public record Release(String dataset, String load) implements Command, CborSerializable {}

  /** How a load was decided. */
  public enum Verdict {
    ADMITTED,
    QUEUED,
    REFUSED
  }

  /**
   * The decision on a load: admitted with {@code slicesAtOnce} slices decoding at once, queued or
   * refused, with the {@code reason} (null when admitted).
   */
  public record Decided(
      String dataset, String load, Verdict verdict, int slicesAtOnce, String reason)
      implements CborSerializable {
    static Decided of(String dataset, String load, Admission admission) {
      if (admission instanceof Admission.Admitted admitted) {
        return new Decided(dataset, load, Verdict.ADMITTED, admitted.need().slicesAtOnce(), null);
      }
      if (admission instanceof Admission.Queued queued) {
        return new Decided(dataset, load, Verdict.QUEUED, 0, queued.reason());
      }
      return new Decided(
          dataset, load, Verdict.REFUSED, 0, ((Admission.Refused) admission).reason());
    }
  }

  /** Asks a node's reporter for its memory now. */
  public record ReportMemory(ActorRef<Reported> replyTo) implements CborSerializable {}

  /** A node's memory now: its cluster address and figures. */
  public record Reported(String address, NodeMemory memory) implements CborSerializable {}

  /** Internal: only from the desk itself, never over the wire. */
  private interface Internal extends Command, NoSerializationVerificationNeeded {}

  private record Listed(Receptionist.Listing listing) implements Internal {}

  private record Heard(int round, String address, NodeMemory memory) implements Internal {}

  private record WaitedTooLong(String key) implements Internal {}

  private record HolderGone(ActorRef<?> holder) implements Internal {}

  private enum Recheck implements Internal {
    INSTANCE
  }

  /**
   * The desk's behavior.
   *
   * @param own this node's memory, read live (its reporter may not be listed yet)
   * @param shared the figures the data nodes last shared, by address (for a node that does not
   *     answer)
   * @param dataNodes the addresses of the data nodes up now
   */
  public static Behavior<Command> create(
      int queueLength,
      Duration waitTimeout,
      Supplier<NodeMemory> own,
      Supplier<Map<String, NodeMemory>> shared,
      Supplier<Set<String>> dataNodes) {
    // A failure of the desk's own (a stash overflowing) restarts it with an empty book rather than
    // stopping admission for good: entities ask again, and loads in flight count once they hold
    // memory.
    Behavior<Command> desk =
        Behaviors.setup(
            context ->
                Behaviors.withTimers(
                    timers ->
                        Behaviors.withStash(
                            STASH,
                            stash ->
                                new AdmissionDesk(
                                        context,
                                        timers,
                                        stash,
                                        new AdmissionBook(queueLength, waitTimeout),
                                        waitTimeout,
                                        own,
                                        shared,
                                        dataNodes)
                                    .idle())));
    return Behaviors.supervise(desk).onFailure(SupervisorStrategy.restart());
  }

  /**
   * A node's reporter: answers with this node's memory, read live from {@code memory}, and is
   * registered under {@link #REPORTERS}.
   */
  public static Behavior<ReportMemory> reporter(Supplier<NodeMemory> memory) {
    return Behaviors.setup(
        context -> {
          context
              .getSystem()
              .receptionist()
              .tell(Receptionist.register(REPORTERS, context.getSelf()));
          String address = Cluster.get(context.getSystem()).selfMember().address().toString();
          return Behaviors.receiveMessage(
              ask -> {
                ask.replyTo().tell(new Reported(address, memory.get()));
                return Behaviors.same();
              });
        });
  }

  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final StashBuffer<Command> stash;
  private final AdmissionBook book;
  private final Duration waitTimeout;
  private final Supplier<NodeMemory> own;
  private final Supplier<Map<String, NodeMemory>> shared;
  private final Supplier<Set<String>> dataNodes;

  /** Where the decisions on waiting loads go, and each load's entity, by key. */
  private final Map<String, ActorRef<Decided>> waitingFor = new HashMap<>();

  private final Map<String, ActorRef<?>> holders = new HashMap<>();

  /** Each load's dataset and load id, by key. */
  private final Map<String, Admit> asked = new HashMap<>();

  private Set<ActorRef<ReportMemory>> reporters = Set.of();
  private int round;

  private AdmissionDesk(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      StashBuffer<Command> stash,
      AdmissionBook book,
      Duration waitTimeout,
      Supplier<NodeMemory> own,
      Supplier<Map<String, NodeMemory>> shared,
      Supplier<Set<String>> dataNodes) {
    this.context = context;
    this.timers = timers;
    this.stash = stash;
    this.book = book;
    this.waitTimeout = waitTimeout;
    this.own = own;
    this.shared = shared;
    this.dataNodes = dataNodes;
    context
        .getSystem()
        .receptionist()
        .tell(
            Receptionist.subscribe(
                REPORTERS, context.messageAdapter(Receptionist.Listing.class, Listed::new)));
  }

  private Behavior<Command> idle() {
    return Behaviors.receive(Command.class)
        .onMessage(Listed.class, this::onListed)
        .onMessage(Admit.class, this::onAdmit)
        .onMessage(Release.class, this::onRelease)
        .onMessage(
            WaitedTooLong.class,
            expired -> withFigures(figures -> onWaitedTooLong(expired.key(), figures)))
        .onMessage(HolderGone.class, this::onHolderGone)
        .onMessageEquals(
            Recheck.INSTANCE, () -> book.waiting() ? withFigures(this::recheck) : Behaviors.same())
        .onMessage(Heard.class, late -> Behaviors.same())
        .build();
  }

  private Behavior<Command> onListed(Listed listed) {
    reporters = Set.copyOf(listed.listing().getServiceInstances(REPORTERS));
    return Behaviors.same();
  }

  private Behavior<Command> onAdmit(Admit admit) {
    String key = AdmissionBook.key(admit.dataset(), admit.load());
    Admission known = book.decided(key);
    if (known != null) {
      // Asked again (the entity had not heard yet): the same answer, no new reservation.
      admit.replyTo().tell(Decided.of(admit.dataset(), admit.load(), known));
      return Behaviors.same();
    }
    return withFigures(
        figures -> {
          Admission decided = book.admit(key, admit.dataset(), admit.need(), figures);
          if (!(decided instanceof Admission.Refused)) {
            asked.put(key, admit);
            holders.put(key, admit.holder());
            context.watchWith(admit.holder(), new HolderGone(admit.holder()));
          }
          if (decided instanceof Admission.Queued) {
            waitingFor.put(key, admit.replyTo());
            timers.startSingleTimer(key, new WaitedTooLong(key), waitTimeout);
            if (!timers.isTimerActive(Recheck.INSTANCE)) {
              timers.startTimerWithFixedDelay(Recheck.INSTANCE, RECHECK_EVERY);
            }
          }
          admit.replyTo().tell(Decided.of(admit.dataset(), admit.load(), decided));
        });
  }

  private Behavior<Command> onRelease(Release release) {
    String key = AdmissionBook.key(release.dataset(), release.load());
    if (book.decided(key) == null) {
      return Behaviors.same();
    }
    return withFigures(figures -> release(key, figures));
  }

  private Behavior<Command> onHolderGone(HolderGone gone) {
    Set<String> keys = new HashSet<>();
    holders.forEach(
        (key, holder) -> {
          if (holder.equals(gone.holder())) {
            keys.add(key);
          }
        });
    if (keys.isEmpty()) {
      return Behaviors.same();
    }
    return withFigures(figures -> keys.forEach(key -> release(key, figures)));
  }

  private void release(String key, MemoryFigures figures) {
    forget(key);
    tell(book.release(key, figures));
  }

  private void onWaitedTooLong(String key, MemoryFigures figures) {
    Admission.Refused refused = book.waitedTooLong(key, figures);
    if (refused != null) {
      ActorRef<Decided> replyTo = waitingFor.get(key);
      Admit admit = asked.get(key);
      forget(key);
      replyTo.tell(Decided.of(admit.dataset(), admit.load(), refused));
    }
  }

  private void recheck(MemoryFigures figures) {
    tell(book.recheck(figures));
  }

  /** Tells waiting loads what was decided for them. */
  private void tell(Map<String, Admission> decisions) {
    decisions.forEach(
        (key, decided) -> {
          ActorRef<Decided> replyTo = waitingFor.remove(key);
          timers.cancel(key);
          Admit admit = asked.get(key);
          if (decided instanceof Admission.Refused) {
            forget(key);
          }
          if (replyTo != null && admit != null) {
            replyTo.tell(Decided.of(admit.dataset(), admit.load(), decided));
          }
        });
    if (!book.waiting()) {
      timers.cancel(Recheck.INSTANCE);
    }
  }

  private void forget(String key) {
    waitingFor.remove(key);
    timers.cancel(key);
    asked.remove(key);
    ActorRef<?> holder = holders.remove(key);
    if (holder != null && !holders.containsValue(holder)) {
      context.unwatch(holder);
    }
  }

  /**
   * Asks every up data node for its memory, then runs {@code decide} on the figures, holding every
   * other message until then so decisions are taken one at a time, each on figures read for it.
   */
  private Behavior<Command> withFigures(Consumer<MemoryFigures> decide) {
    Set<String> up = dataNodes.get();
    int asked = ++round;
    String self = Cluster.get(context.getSystem()).selfMember().address().toString();
    Map<String, NodeMemory> heard = new TreeMap<>();
    if (up.contains(self)) {
      // This node's own figures need no asking, and its reporter may not be listed yet (a load
      // sent as the node starts): without them nothing would be known and every load admitted.
      heard.put(self, own.get());
    }
    Set<String> pending = new HashSet<>();
    for (ActorRef<ReportMemory> reporter : reporters) {
      if (reporter.path().address().hasLocalScope()) {
        continue;
      }
      String address = reporter.path().address().toString();
      if (up.contains(address) && pending.add(address)) {
        context.ask(
            Reported.class,
            reporter,
            ASK_FOR,
            ReportMemory::new,
            (reported, failure) ->
                new Heard(asked, address, reported == null ? null : reported.memory()));
      }
    }
    if (pending.isEmpty()) {
      decide.accept(figures(up, heard));
      return Behaviors.same();
    }
    return gathering(asked, up, pending, heard, decide);
  }

  private Behavior<Command> gathering(
      int asked,
      Set<String> up,
      Set<String> pending,
      Map<String, NodeMemory> heard,
      Consumer<MemoryFigures> decide) {
    return Behaviors.receive(Command.class)
        .onMessage(Listed.class, this::onListed)
        .onMessage(
            Heard.class,
            answer -> {
              if (answer.round() != asked) {
                return Behaviors.same();
              }
              pending.remove(answer.address());
              if (answer.memory() != null) {
                heard.put(answer.address(), answer.memory());
              }
              if (!pending.isEmpty()) {
                return Behaviors.same();
              }
              decide.accept(figures(up, heard));
              return stash.unstashAll(idle());
            })
        .onAnyMessage(
            other -> {
              stash.stash(other);
              return Behaviors.same();
            })
        .build();
  }

  /** Each up data node's figures: as it answered now, else as it last shared them. */
  private MemoryFigures figures(Set<String> up, Map<String, NodeMemory> heard) {
    Map<String, NodeMemory> last = shared.get();
    Map<String, NodeMemory> known = new TreeMap<>();
    for (String address : up) {
      NodeMemory memory = heard.containsKey(address) ? heard.get(address) : last.get(address);
      if (memory != null) {
        known.put(address, memory);
      }
    }
    return new MemoryFigures(known);
  }
}
