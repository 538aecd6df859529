package io.floe.gateway.job;

import io.floe.gateway.FlightErrors;
import io.floe.gateway.GatewaySettings;
import io.floe.gateway.RepeatedAsk;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.job.entity.JobEntity;
import io.floe.tenant.Owner;
import io.floe.tenant.Requester;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;

/** The gateway's questions to job entities, wherever in the cluster they live. */
final class JobQueries {
  private final ActorSystem<?> system;
  private final ClusterSharding sharding;
  private final GatewaySettings settings;

  /** The status each job epoch was last planned with, the most recent few thousand. */
  private final Map<String, JobStatus> planned =
      Collections.synchronizedMap(
          new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, JobStatus> eldest) {
              return size() > PLANNED_KEPT;
            }
          });

  private static final int PLANNED_KEPT = 4_096;

  JobQueries(ActorSystem<?> system, GatewaySettings settings) {
    this.system = system;
    this.sharding = ClusterSharding.get(system);
    this.settings = settings;
  }

  /**
   * Every registered job's status, by id. A job dropped meanwhile answers that it is unknown (the
   * only refusal of GetJob) and is left out.
   */
  CompletionStage<List<JobStatus>> list() {
    return JobEntity.DIRECTORY
        .readAll(system)
        .thenCompose(
            records -> {
              List<String> ids = records.keySet().stream().sorted().toList();
              List<CompletableFuture<JobEntity.JobReply>> asked =
                  ids.stream()
                      .map(
                          id ->
                              this.<JobEntity.JobReply>repeated(
                                      id, replyTo -> new JobEntity.GetJob(replyTo))
                                  .toCompletableFuture())
                      .toList();
              return CompletableFuture.allOf(asked.toArray(CompletableFuture[]::new))
                  .thenApply(
                      done ->
                          asked.stream()
                              .map(CompletableFuture::join)
                              .filter(JobEntity.JobReply.Found.class::isInstance)
                              .map(reply -> ((JobEntity.JobReply.Found) reply).status())
                              .toList());
            });
  }

  private EntityRef<JobEntity.Command> job(String id) {
    return sharding.entityRefFor(JobEntity.TYPE_KEY, id);
  }

  CompletionStage<JobStatus> register(JobSpec spec, PinnedLayout layout, Owner owner) {
    return this.<JobEntity.JobReply>repeated(
            spec.job(), replyTo -> new JobEntity.Register(spec, layout, owner, replyTo))
        .thenApply(JobQueries::statusOrThrow);
  }

  /**
   * A job's status for planning an epoch's read, or the last one this node had for that epoch if
   * the job's entity does not answer within {@code patience}: a reader failing over asks so, since
   * the entity may live on the node that died and what an epoch reads does not change. A job
   * dropped meanwhile still fails at once (its entity answers that).
   */
  CompletionStage<JobStatus> statusForPlan(String id, long epoch, Duration patience) {
    String key = id + '\n' + epoch;
    CompletableFuture<JobStatus> fresh = status(id, epoch).toCompletableFuture();
    fresh.thenAccept(status -> planned.put(key, status));
    JobStatus known = planned.get(key);
    return known == null
        ? fresh
        : fresh.copy().completeOnTimeout(known, patience.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The job's status; with an epoch, that epoch's layout (a new epoch begins on the newest). */
  CompletionStage<JobStatus> status(String id, Long epoch) {
    return this.<JobEntity.JobReply>repeated(id, replyTo -> new JobEntity.GetJob(epoch, replyTo))
        .thenApply(JobQueries::statusOrThrow);
  }

  /** Drops the job if the requester registered it (or is an admin); else NOT_OWNER. */
  CompletionStage<JobStatus> drop(String id, Requester requester) {
    return job(id)
        .<JobEntity.JobReply>ask(
            replyTo -> new JobEntity.DropJob(requester, replyTo), settings.askTimeout())
        .thenApply(JobQueries::statusOrThrow);
  }

  /** A lease, a wait or the epoch's end; a refusal is thrown as its error. */
  CompletionStage<JobEntity.LeaseReply> lease(String id, long epoch, String worker) {
    String request = java.util.UUID.randomUUID().toString(); // the same for every attempt
    return this.<JobEntity.LeaseReply>repeated(
            id, replyTo -> new JobEntity.Lease(epoch, worker, request, replyTo))
        .thenApply(
            reply -> {
              if (reply instanceof JobEntity.LeaseReply.Refused refused) {
                throw FlightErrors.of(refused.failure());
              }
              return reply;
            });
  }

  CompletionStage<JobEntity.AckReply.Outcome> ack(
      String id, long epoch, String lease, String worker) {
    return this.<JobEntity.AckReply>repeated(
            id, replyTo -> new JobEntity.Ack(epoch, lease, worker, replyTo))
        .thenApply(
            reply -> {
              if (reply instanceof JobEntity.AckReply.Refused refused) {
                throw FlightErrors.of(refused.failure());
              }
              return ((JobEntity.AckReply.Answered) reply).outcome();
            });
  }

  /** Asks the job's entity, again after each unanswered attempt (see {@link RepeatedAsk}). */
  private <R> CompletionStage<R> repeated(
      String id, org.apache.pekko.japi.function.Function<ActorRef<R>, JobEntity.Command> message) {
    return RepeatedAsk.ask(job(id), message, settings.askAttemptTimeout(), settings.askTimeout());
  }

  private static JobStatus statusOrThrow(JobEntity.JobReply reply) {
    if (reply instanceof JobEntity.JobReply.Refused refused) {
      throw FlightErrors.of(refused.failure());
    }
    return ((JobEntity.JobReply.Found) reply).status();
  }
}
