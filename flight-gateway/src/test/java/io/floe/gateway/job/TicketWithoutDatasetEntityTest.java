package io.floe.gateway.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.floe.arrow.ArrowSchemas;
import io.floe.dataset.DatasetEntity;
import io.floe.dataset.DatasetState;
import io.floe.dataset.DatasetStatus;
import io.floe.gateway.ClusterAnswers;
import io.floe.gateway.GatewaySettings;
import io.floe.gateway.ShardingQuorum;
import io.floe.gateway.dataset.DatasetQueries;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.JobStatus;
import io.floe.job.PinnedLayout;
import io.floe.job.TailPolicy;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.JobReadRequest;
import io.floe.spec.DatasetLayout;
import io.floe.testing.TestRows;
import io.floe.ticket.JobTicket;
import io.floe.ticket.TicketSigner;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Location;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node serving a job ticket whose dataset entity does not answer (its node died, and the cluster
 * has not started it elsewhere yet) serves the ticket from a layout it knows when that layout
 * places the ticket as its plan did, and otherwise waits for the entity as it always did. The
 * dataset entities here are real sharded entities on a one-node cluster that answer as each test
 * says: at once, late, or never.
 */
@Timeout(60)
class TicketWithoutDatasetEntityTest {
  private static final String[] HOLDERS = {
    "grpc+tcp://10.0.0.1:47470", "grpc+tcp://10.0.0.2:47470", "grpc+tcp://10.0.0.3:47470"
  };
  private static final long ROWS = 300_000;
  private static final TicketSigner TICKETS =
      new TicketSigner(
          "a-ticket-secret-for-the-serving-test".getBytes(StandardCharsets.UTF_8),
          Duration.ofMinutes(10));

  /** What each dataset's entity answers a layout question, and when; absent: never (dead node). */
  private static final Map<String, Answer> ANSWERS = new ConcurrentHashMap<>();

  private record Answer(DatasetLayout layout, Duration after) {}

  private static ActorTestKit kit;
  private static DatasetQueries datasets;
  private static ClusterAnswers answers;
  private static JobLayouts layouts;

  @BeforeAll
  static void start() {
    kit =
        ActorTestKit.create(
            "ticket-without-dataset-entity",
            ConfigFactory.parseString(
                    "pekko.actor.provider = cluster\n"
                        + "pekko.remote.artery.canonical.hostname = 127.0.0.1\n"
                        + "pekko.remote.artery.canonical.port = 0\n"
                        + "pekko.actor.serialize-messages = on\n")
                .withFallback(ConfigFactory.load()));
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> cluster.selfMember().status() == MemberStatus.up());
    ClusterSharding.get(kit.system())
        .init(Entity.of(DatasetEntity.TYPE_KEY, context -> entity(context.getEntityId())));
    GatewaySettings settings =
        new GatewaySettings(
            Location.forGrpcInsecure("127.0.0.1", 47470),
            Duration.ofSeconds(3),
            Duration.ofSeconds(1),
            Duration.ofSeconds(5),
            0,
            TICKETS);
    datasets = new DatasetQueries(kit.system(), settings);
    answers = new ClusterAnswers(settings, new ShardingQuorum(kit.system()));
    layouts =
        new JobLayouts(datasets, new JobQueries(kit.system(), settings), answers, new JobOrders());
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  /** A dataset entity that answers layout questions as {@link #ANSWERS} says. */
  private static Behavior<DatasetEntity.Command> entity(String name) {
    return Behaviors.setup(
        context ->
            Behaviors.receive(DatasetEntity.Command.class)
                .onMessage(
                    DatasetEntity.GetLayout.class,
                    get -> {
                      Answer answer = ANSWERS.get(name);
                      if (answer != null) {
                        context.scheduleOnce(
                            answer.after(),
                            get.replyTo(),
                            new DatasetEntity.LayoutReply.Found(answer.layout(), ready(name)));
                      }
                      return Behaviors.same();
                    })
                .build());
  }

  private static DatasetStatus ready(String name) {
    return new DatasetStatus(
        name,
        null,
        DatasetState.READY,
        30,
        30,
        ROWS,
        ROWS * 80,
        1L,
        null,
        null,
        null,
        null,
        List.of(),
        null,
        2);
  }

  /** Slice {@code s} on node {@code s % 3} with a copy on the next node. */
  private static DatasetLayout replicated(String name, int slices) {
    List<DatasetLayout.SliceRows> rows = new ArrayList<>(slices);
    for (int s = 0; s < slices; s++) {
      long count = ROWS / slices;
      rows.add(
          new DatasetLayout.SliceRows(
              name + "/1/s" + s, count, count * 80, HOLDERS[s % 3], List.of(HOLDERS[(s + 1) % 3])));
    }
    return new DatasetLayout(
        name, 1, null, ArrowSchemas.fromIceberg(TestRows.EVENTS).toJson(), rows);
  }

  /** The layout with slice 0 held by the node that held only its copy. */
  private static DatasetLayout slice0Moved(DatasetLayout layout) {
    List<DatasetLayout.SliceRows> rows = new ArrayList<>(layout.slices());
    DatasetLayout.SliceRows slice = rows.get(0);
    rows.set(
        0,
        new DatasetLayout.SliceRows(
            slice.sliceId(), slice.rows(), slice.bytes(), HOLDERS[1], List.of(HOLDERS[2])));
    return new DatasetLayout(
        layout.name(), layout.snapshotId(), null, layout.arrowSchemaJson(), rows);
  }

  /** A ticket for the node {@code holder}, planned on {@code layout} by another node. */
  private static JobTicket planned(DatasetLayout layout, List<String> avoid, String holder) {
    JobSpec spec =
        new JobSpec(
            "train",
            layout.name(),
            7,
            true,
            JobMode.DETERMINISTIC,
            List.of(),
            4096,
            TailPolicy.DROP,
            4096,
            16,
            1,
            30_000,
            false);
    JobStatus job =
        new JobStatus(
            spec,
            0,
            new PinnedLayout(1, layout.fingerprint(), layout.rows()),
            List.of(),
            layout.rows() / 4096,
            0,
            0,
            0,
            0,
            List.of(),
            null);
    JobReadRequest request = new JobReadRequest("train", 0, 1, 0, 0, null, 1, 1, avoid);
    return new JobReadPlanner(TICKETS, new JobOrders())
            .plan(job, layout, request, FlightDescriptor.command(request.toJson()), null)
            .getEndpoints()
            .stream()
            .map(endpoint -> (JobTicket) TICKETS.verify(endpoint.getTicket()))
            .filter(ticket -> ticket.holder().equals(holder))
            .findFirst()
            .orElseThrow();
  }

  @Test
  void aTicketPlacedAsALayoutThisNodeHeardIsServedWhileTheDatasetEntityIsSilent() {
    DatasetLayout layout = replicated("heard", 30);
    ANSWERS.put("heard", new Answer(layout, Duration.ZERO));
    // This node heard the dataset serve the layout (another job's plan, a shard read) but never
    // planned or served this job: it has no copy of its own.
    assertThat(answers.await(datasets.layout("heard")).value())
        .isInstanceOf(DatasetEntity.LayoutReply.Found.class);
    ANSWERS.remove("heard"); // the entity's node dies
    // A reader that could not reach node 1 planned again through another node.
    JobTicket ticket = planned(layout, List.of(HOLDERS[0]), HOLDERS[1]);

    JobLayouts.PlacedLayout placed = layouts.forTicket(ticket);

    assertThat(placed.layout()).isEqualTo(layout);
    assertThat(placed.placement().fingerprint()).isEqualTo(ticket.placement());
    assertThat(placed.placement().holders()).doesNotContain(HOLDERS[0]);
  }

  @Test
  void aTicketPlacedOtherwiseThanThisNodeKnowsWaitsForTheDatasetEntity() {
    DatasetLayout heard = replicated("moved", 30);
    DatasetLayout moved = slice0Moved(heard);
    ANSWERS.put("moved", new Answer(heard, Duration.ZERO));
    answers.await(datasets.layout("moved"));
    // The entity answers again only after the short patience (within one ask's attempt), with
    // slice 0 moved.
    ANSWERS.put("moved", new Answer(moved, JobLayouts.PLAN_PATIENCE.multipliedBy(2)));
    JobTicket ticket = planned(moved, List.of(), HOLDERS[1]);

    JobLayouts.PlacedLayout placed = layouts.forTicket(ticket);

    assertThat(placed.layout()).isEqualTo(moved);
    assertThat(placed.placement().fingerprint()).isEqualTo(ticket.placement());
  }

  @Test
  void aTicketThisNodeKnowsNothingOfWaitsForTheDatasetEntityAsBefore() {
    DatasetLayout layout = replicated("unknown", 30);
    JobTicket ticket = planned(layout, List.of(HOLDERS[0]), HOLDERS[1]);

    assertThatThrownBy(() -> layouts.forTicket(ticket))
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> assertThat(ErrorCode.of(e)).contains(ErrorCode.CLUSTER_TIMEOUT));
  }
}
