package io.floe.job.entity;

import io.floe.job.JobRecord;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;

/** The replicated map of registered jobs' records, by job id; writes and reads go to a majority. */
public final class JobDirectory {
  static final Key<LWWMap<String, JobRecord>> KEY = LWWMapKey.create("floe-jobs");
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private JobDirectory() {}

  /** The ids of every registered job, sorted, as a majority of the nodes knows them. */
  public static CompletionStage<List<String>> ids(ActorSystem<?> system) {
    return AskPattern.<Replicator.Command, Replicator.GetResponse<LWWMap<String, JobRecord>>>ask(
            DistributedData.get(system).replicator(),
            replyTo -> new Replicator.Get<>(KEY, read(), replyTo),
            TIMEOUT.plusSeconds(1),
            system.scheduler())
        .thenApply(
            response -> {
              if (response instanceof Replicator.GetSuccess<LWWMap<String, JobRecord>> found) {
                return found.get(KEY).getEntries().keySet().stream().sorted().toList();
              }
              if (response instanceof Replicator.NotFound<?>) {
                return List.of();
              }
              throw new IllegalStateException(
                  "The job directory could not be read from a majority of the nodes: " + response);
            });
  }

  static Replicator.ReadConsistency read() {
    return new Replicator.ReadMajority(TIMEOUT);
  }

  static Replicator.WriteConsistency write() {
    return new Replicator.WriteMajority(TIMEOUT);
  }
}
