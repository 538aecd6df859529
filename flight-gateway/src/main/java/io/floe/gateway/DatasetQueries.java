package io.floe.gateway;

import io.floe.dataset.DatasetEntity;
import io.floe.dataset.DatasetSpec;
import io.floe.dataset.DatasetStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;

/** The gateway's questions to dataset entities, wherever in the cluster they live. */
public final class DatasetQueries {
  private final ActorSystem<?> system;
  private final ClusterSharding sharding;
  private final GatewaySettings settings;

  public DatasetQueries(ActorSystem<?> system, GatewaySettings settings) {
    this.system = system;
    this.sharding = ClusterSharding.get(system);
    this.settings = settings;
  }

  ActorSystem<?> system() {
    return system;
  }

  private EntityRef<DatasetEntity.Command> dataset(String name) {
    return sharding.entityRefFor(DatasetEntity.TYPE_KEY, name);
  }

  public CompletionStage<DatasetEntity.LoadReply> load(DatasetSpec spec, boolean untilReady) {
    Duration timeout = untilReady ? settings.loadWaitTimeout() : settings.askTimeout();
    return dataset(spec.name())
        .ask(replyTo -> new DatasetEntity.Load(spec, untilReady, replyTo), timeout);
  }

  public CompletionStage<DatasetStatus> status(String name) {
    return dataset(name).ask(DatasetEntity.GetStatus::new, settings.askTimeout());
  }

  public CompletionStage<DatasetEntity.LayoutReply> layout(String name) {
    return dataset(name).ask(DatasetEntity.GetLayout::new, settings.askTimeout());
  }

  public CompletionStage<DatasetStatus> drop(String name) {
    return dataset(name).ask(DatasetEntity.Drop::new, settings.askTimeout());
  }

  /** Every loaded dataset's status, by name. */
  public CompletionStage<List<DatasetStatus>> list() {
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
                    all.sort(Comparator.comparing(DatasetStatus::name));
                    return all;
                  });
        });
  }
}
