package io.floe.gateway.dataset;

import io.floe.dataset.DatasetEntity;
import io.floe.dataset.DatasetRecord;
import io.floe.dataset.DatasetState;
import io.floe.dataset.DatasetStatus;
import io.floe.gateway.GatewaySettings;
import io.floe.gateway.RepeatedAsk;
import io.floe.spec.DatasetLayout;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Requester;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;

/**
 * The gateway's questions to dataset entities, wherever in the cluster they live. While a dataset's
 * entity is moving (its node left or died and sharding has not placed it again yet), asks to it
 * wait; after {@link #PATIENCE} the gateway answers status and layout from the last answer it had,
 * marked stale, so that readers and operators keep getting answers. Readers that plan from a stale
 * layout and find a slice gone plan again. Job plans ask with a shorter patience: the layout an
 * epoch reads is the one the node had, and its slices' copies are on the nodes it names.
 */
public final class DatasetQueries {
  public static final Duration PATIENCE = Duration.ofSeconds(3);

  private final ActorSystem<?> system;
  private final ClusterSharding sharding;
  private final GatewaySettings settings;
  private final Map<String, DatasetStatus> lastStatus = new ConcurrentHashMap<>();
  private final Map<String, DatasetEntity.LayoutReply> lastLayout = new ConcurrentHashMap<>();

  public DatasetQueries(ActorSystem<?> system, GatewaySettings settings) {
    this.system = system;
    this.sharding = ClusterSharding.get(system);
    this.settings = settings;
  }

  public ActorSystem<?> system() {
    return system;
  }

  private EntityRef<DatasetEntity.Command> dataset(String name) {
    return sharding.entityRefFor(DatasetEntity.TYPE_KEY, name);
  }

  public CompletionStage<DatasetEntity.LoadReply> load(
      DatasetSpec spec, boolean untilReady, Requester requester) {
    Duration timeout = untilReady ? settings.loadWaitTimeout() : settings.askTimeout();
    return dataset(spec.name())
        .ask(replyTo -> new DatasetEntity.Load(spec, untilReady, requester, replyTo), timeout);
  }

  /**
   * Refreshes a dataset to its table's newest snapshot; with {@code spec} (a load of the newest
   * snapshot) the dataset must have been loaded the same way.
   */
  public CompletionStage<DatasetEntity.LoadReply> refresh(
      String name, DatasetSpec spec, boolean untilDone, Requester requester) {
    Duration timeout = untilDone ? settings.loadWaitTimeout() : settings.askTimeout();
    return dataset(name)
        .ask(replyTo -> new DatasetEntity.Refresh(spec, untilDone, requester, replyTo), timeout);
  }

  /** The dataset's status; {@code stale} in the answer says it came from the last one known. */
  public CompletionStage<Answer<DatasetStatus>> status(String name) {
    return remembered(
        this.<DatasetStatus>repeated(name, DatasetEntity.GetStatus::new),
        name,
        lastStatus,
        status -> status.state() != DatasetState.ABSENT,
        PATIENCE);
  }

  public CompletionStage<Answer<DatasetEntity.LayoutReply>> layout(String name) {
    return layout(name, PATIENCE);
  }

  /**
   * The layout, or the last one known if the dataset's entity does not answer within {@code
   * patience}: job plans ask so, since the cluster may not have noticed a node's death yet and the
   * dataset's entity may live there.
   */
  public CompletionStage<Answer<DatasetEntity.LayoutReply>> layout(String name, Duration patience) {
    return remembered(
        this.<DatasetEntity.LayoutReply>repeated(name, DatasetEntity.GetLayout::new),
        name,
        lastLayout,
        reply -> reply.status().state() != DatasetState.ABSENT,
        patience);
  }

  /**
   * The layout this node last heard the dataset serve, if it has this fingerprint; asks nothing. A
   * job stream whose dataset entity is slow to answer (its node may have died) may serve from it.
   */
  public Optional<DatasetLayout> lastLayout(String name, String fingerprint) {
    return lastLayout.get(name) instanceof DatasetEntity.LayoutReply.Found found
            && found.layout().fingerprint().equals(fingerprint)
        ? Optional.of(found.layout())
        : Optional.empty();
  }

  /**
   * The layout with this fingerprint: the one serving, or one the dataset keeps for the jobs that
   * read it; none when it no longer has it.
   */
  public CompletionStage<DatasetEntity.LayoutReply> layout(String name, String fingerprint) {
    return this.<DatasetEntity.LayoutReply>repeated(
        name, replyTo -> new DatasetEntity.GetLayout(fingerprint, replyTo));
  }

  /** Asks the dataset's entity, again after each unanswered attempt (see {@link RepeatedAsk}). */
  private <R> CompletionStage<R> repeated(
      String name,
      org.apache.pekko.japi.function.Function<ActorRef<R>, DatasetEntity.Command> message) {
    return RepeatedAsk.ask(
        dataset(name), message, settings.askAttemptTimeout(), settings.askTimeout());
  }

  /** Drops the dataset if the requester may; the status it had, or the refusal. */
  public CompletionStage<DatasetEntity.LoadReply> drop(String name, Requester requester) {
    return dataset(name)
        .<DatasetEntity.LoadReply>ask(
            replyTo -> new DatasetEntity.Drop(requester, replyTo), settings.askTimeout())
        .thenApply(
            reply -> {
              if (reply instanceof DatasetEntity.LoadReply.Answered) {
                lastStatus.remove(name);
                lastLayout.remove(name);
              }
              return reply;
            });
  }

  /** An answer, and whether it is the last one known rather than a fresh one. */
  public record Answer<T>(T value, boolean stale) {}

  private <T> CompletionStage<Answer<T>> remembered(
      CompletionStage<T> ask,
      String name,
      Map<String, T> last,
      java.util.function.Predicate<T> exists,
      Duration patience) {
    CompletableFuture<T> fresh = ask.toCompletableFuture();
    // Only what exists is remembered: a name nobody loaded must not take memory for good.
    fresh.thenAccept(
        value -> {
          if (exists.test(value)) {
            last.put(name, value);
          } else {
            last.remove(name);
          }
        });
    CompletableFuture<Answer<T>> answer = fresh.thenApply(value -> new Answer<>(value, false));
    CompletableFuture<Answer<T>> fallback = new CompletableFuture<>();
    CompletableFuture.delayedExecutor(patience.toMillis(), TimeUnit.MILLISECONDS)
        .execute(
            () -> {
              T known = last.get(name);
              if (known != null && !fresh.isDone()) {
                fallback.complete(new Answer<>(known, true));
              }
            });
    return answer
        .applyToEither(fallback.exceptionally(e -> null), a -> a)
        .thenCompose(a -> a != null ? CompletableFuture.completedFuture(a) : answer);
  }

  /**
   * Every dataset's status, by name: those serving (registered with the receptionist) and those the
   * cluster's records say were loaded but whose entities have not started again yet (after a
   * restart with durable state sharding takes seconds to place them). Those are asked, which starts
   * their recovery; one that does not answer at once is listed PLANNING from its record, so a node
   * that is ready never lists its recovering datasets as gone.
   */
  public CompletionStage<List<DatasetStatus>> list() {
    CompletionStage<Map<String, DatasetRecord>> recorded =
        DatasetEntity.DIRECTORY.readAll(system).exceptionally(e -> Map.of());
    return registered()
        .thenCombine(recorded, (serving, records) -> withRecorded(serving, records))
        .thenCompose(all -> all)
        .thenApply(
            all -> {
              List<DatasetStatus> sorted = new ArrayList<>(all);
              sorted.sort(Comparator.comparing(DatasetStatus::name));
              return sorted;
            });
  }

  private CompletionStage<List<DatasetStatus>> registered() {
    CompletionStage<Receptionist.Listing> listing =
        AskPattern.ask(
            system.receptionist(),
            replyTo -> Receptionist.find(DatasetEntity.LOADED, replyTo),
            settings.askTimeout(),
            system.scheduler());
    return listing.thenCompose(
        found -> {
          List<CompletableFuture<DatasetStatus>> statuses = new ArrayList<>();
          for (var ref : found.getServiceInstances(DatasetEntity.LOADED)) {
            statuses.add(
                AskPattern.<DatasetEntity.Command, DatasetStatus>ask(
                        ref,
                        DatasetEntity.GetStatus::new,
                        settings.askTimeout(),
                        system.scheduler())
                    .toCompletableFuture());
          }
          return CompletableFuture.allOf(statuses.toArray(CompletableFuture[]::new))
              .thenApply(
                  done -> {
                    List<DatasetStatus> all = new ArrayList<>();
                    statuses.forEach(s -> all.add(s.join()));
                    return all;
                  });
        });
  }

  /** {@code serving} and the recorded datasets not among them. */
  private CompletableFuture<List<DatasetStatus>> withRecorded(
      List<DatasetStatus> serving, Map<String, DatasetRecord> records) {
    java.util.Set<String> listed = new java.util.HashSet<>();
    serving.forEach(status -> listed.add(status.name()));
    List<CompletableFuture<DatasetStatus>> recovering = new ArrayList<>();
    records.forEach(
        (name, record) -> {
          if (!listed.contains(name)) {
            DatasetStatus fromRecord = DatasetStatus.recovering(name, record);
            recovering.add(
                dataset(name)
                    .<DatasetStatus>ask(DatasetEntity.GetStatus::new, settings.askAttemptTimeout())
                    .toCompletableFuture()
                    .exceptionally(e -> fromRecord)
                    .thenApply(status -> status.state() == DatasetState.ABSENT ? null : status));
          }
        });
    return CompletableFuture.allOf(recovering.toArray(CompletableFuture[]::new))
        .thenApply(
            done -> {
              List<DatasetStatus> all = new ArrayList<>(serving);
              recovering.stream()
                  .map(CompletableFuture::join)
                  .filter(s -> s != null)
                  .forEach(all::add);
              return all;
            });
  }
}
