package io.floe.gateway;

import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.job.entity.JobEntity;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;

/** The gateway's questions to job entities, wherever in the cluster they live. */
final class JobQueries {
  private final ActorSystem<?> system;
  private final ClusterSharding sharding;
  private final GatewaySettings settings;

  JobQueries(ActorSystem<?> system, GatewaySettings settings) {
    this.system = system;
    this.sharding = ClusterSharding.get(system);
    this.settings = settings;
  }

  /** Every registered job's status, by id; a job dropped meanwhile is left out. */
  CompletionStage<java.util.List<JobStatus>> list() {
    return io.floe.job.entity.JobDirectory.ids(system)
        .thenCompose(
            ids -> {
              java.util.List<java.util.concurrent.CompletableFuture<JobStatus>> asked =
                  new java.util.ArrayList<>();
              for (String id : ids) {
                asked.add(
                    status(id, null)
                        .toCompletableFuture()
                        .exceptionally(
                            failure -> {
                              if (isJobNotFound(failure)) {
                                return null;
                              }
                              throw failure instanceof java.util.concurrent.CompletionException c
                                  ? c
                                  : new java.util.concurrent.CompletionException(failure);
                            }));
              }
              return java.util.concurrent.CompletableFuture.allOf(
                      asked.toArray(java.util.concurrent.CompletableFuture[]::new))
                  .thenApply(
                      done ->
                          asked.stream()
                              .map(java.util.concurrent.CompletableFuture::join)
                              .filter(java.util.Objects::nonNull)
                              .toList());
            });
  }

  private EntityRef<JobEntity.Command> job(String id) {
    return sharding.entityRefFor(JobEntity.TYPE_KEY, id);
  }

  CompletionStage<JobStatus> register(JobSpec spec, PinnedLayout layout) {
    return this.<JobEntity.JobReply>repeated(
            spec.job(), replyTo -> new JobEntity.Register(spec, layout, replyTo))
        .thenApply(JobQueries::statusOrThrow);
  }

  /** The job's status; with an epoch, that epoch's layout (a new epoch begins on the newest). */
  CompletionStage<JobStatus> status(String id, Long epoch) {
    return this.<JobEntity.JobReply>repeated(id, replyTo -> new JobEntity.GetJob(epoch, replyTo))
        .thenApply(JobQueries::statusOrThrow);
  }

  CompletionStage<JobStatus> drop(String id) {
    return job(id)
        .ask(JobEntity.DropJob::new, settings.askTimeout())
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

  private static boolean isJobNotFound(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause instanceof org.apache.arrow.flight.FlightRuntimeException flight
        && io.floe.protocol.ErrorCode.of(flight)
            .filter(io.floe.protocol.ErrorCode.JOB_NOT_FOUND::equals)
            .isPresent();
  }

  private static JobStatus statusOrThrow(JobEntity.JobReply reply) {
    if (reply instanceof JobEntity.JobReply.Refused refused) {
      throw FlightErrors.of(refused.failure());
    }
    return ((JobEntity.JobReply.Found) reply).status();
  }
}
