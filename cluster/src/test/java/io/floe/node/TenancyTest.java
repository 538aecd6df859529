package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.JobStatusReply;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.tenant.Owner;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tenants on one node, through a real Flight client: datasets and jobs record their owner and show
 * it in status and list; an operator drops, refreshes and replaces only what its tenant owns, an
 * admin anything; a reader drops only the jobs it registered; a token scoped to datasets reaches
 * and lists only those; a token file line of the old three-field form is the default tenant's.
 * Every refusal is PERMISSION_DENIED with Floe's code and names the dataset or job and both sides.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TenancyTest {
  private static final String OPS_A = "ops-a-token-0123456789abcdef";
  private static final String OPS_B = "ops-b-token-0123456789abcdef";
  private static final String ADMIN = "admin-token-0123456789abcdef";
  private static final String TRAINER_1 = "trainer-1-token-0123456789abcdef";
  private static final String TRAINER_2 = "trainer-2-token-0123456789abcdef";
  private static final String SCOPED = "scoped-token-0123456789abcdef";
  private static final String OLD_LINE = "old-line-token-0123456789abcdef";

  private FloeNode node;
  private BufferAllocator allocator;
  private IcebergTestTables.TestTable table;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 500, TestRows.events(2));
    Path tokens = dir.resolve("tokens");
    Files.writeString(
        tokens,
        String.join(
            "\n",
            "# role name token [tenant=] [datasets=]",
            "operator ops-a " + OPS_A + " tenant=team-a",
            "operator ops-b " + OPS_B + " tenant=team-b",
            "admin root " + ADMIN,
            "reader trainer-1 " + TRAINER_1 + " tenant=team-a",
            "reader trainer-2 " + TRAINER_2 + " tenant=team-a",
            "reader scoped " + SCOPED + " tenant=team-a datasets=a.*,shared",
            "operator old-ops " + OLD_LINE,
            ""));
    node =
        TestNodes.start(
            "floe.security.auth.anonymous = none\n"
                + "floe.security.auth.tokens-file = \""
                + tokens
                + "\"\n");
    allocator = new RootAllocator();
    try (FloeClient a = client(OPS_A);
        FloeClient old = client(OLD_LINE)) {
      a.load(load("a.events"));
      a.load(load("a.other"));
      a.load(load("shared"));
      old.load(load("legacy-tenant"));
    }
  }

  @AfterAll
  void stop() throws Exception {
    allocator.close();
    node.close();
  }

  private FloeClient client(String token) {
    return FloeClient.connect(allocator, node.location(), token);
  }

  private LoadRequest load(String name) {
    return new LoadRequest(DatasetSpec.of(name, table.metadataLocation()), true);
  }

  private static CallOption bearer(String token) {
    FlightCallHeaders headers = new FlightCallHeaders();
    headers.insert("authorization", "Bearer " + token);
    return new HeaderCallOption(headers);
  }

  private static void assertDenied(ThrowingCallable call, String... said) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code())
                  .as(e.getMessage())
                  .isEqualTo(FlightStatusCode.UNAUTHORIZED);
              assertThat(ErrorCode.of(e)).as(e.getMessage()).contains(ErrorCode.PERMISSION_DENIED);
              assertThat(e.status().description()).contains(said);
            });
  }

  @Test
  void statusAndListShowWhoLoadedEachDataset() throws Exception {
    try (FloeClient reader = client(TRAINER_1)) {
      assertThat(reader.status("a.events").owner()).isEqualTo(new Owner("team-a", "ops-a"));
      assertThat(reader.list())
          .filteredOn(status -> status.name().equals("legacy-tenant"))
          .extracting(DatasetStatusReply::owner)
          .containsExactly(new Owner(Owner.DEFAULT_TENANT, "old-ops"));
    }
  }

  @Test
  void anOperatorChangesOnlyItsTenantsDatasets() throws Exception {
    try (FloeClient b = client(OPS_B);
        FloeClient old = client(OLD_LINE);
        FloeClient a = client(OPS_A)) {
      String[] mismatch = {"'a.events'", "tenant 'team-a'", "'ops-b' of tenant 'team-b'"};
      assertDenied(() -> b.drop("a.events"), mismatch);
      assertDenied(() -> b.refresh("a.events", true), mismatch);
      // Replacing: a load under its name, the same spec or another one.
      assertDenied(() -> b.load(load("a.events")), mismatch);
      assertDenied(
          () -> b.load(new LoadRequest(DatasetSpec.of("a.events", "/elsewhere"), true)), mismatch);
      // A token of the old form is in the default tenant: no more an owner of team-a's data.
      assertDenied(() -> old.drop("a.events"), "tenant 'team-a'", "tenant 'default'");
      assertThat(a.status("a.events").state()).isEqualTo(State.READY);
      // Its own tenant's operator may.
      assertThat(a.refresh("a.events", true).state()).isEqualTo(State.READY);
    }
  }

  @Test
  void anAdminChangesAnyTenantsDatasets() throws Exception {
    try (FloeClient a = client(OPS_A);
        FloeClient old = client(OLD_LINE);
        FloeClient admin = client(ADMIN)) {
      a.load(load("a.for-admin"));
      old.load(load("default-for-admin"));
      assertThat(admin.refresh("a.for-admin", true).state()).isEqualTo(State.READY);
      assertThat(admin.drop("a.for-admin").dropped()).isTrue();
      assertThat(admin.drop("default-for-admin").dropped()).isTrue();
      assertThat(admin.status("a.for-admin").state()).isEqualTo(State.ABSENT);
    }
  }

  @Test
  void aReaderDropsOnlyTheJobsItRegistered() throws Exception {
    try (FloeClient first = client(TRAINER_1);
        FloeClient second = client(TRAINER_2);
        FloeClient admin = client(ADMIN)) {
      JobStatusReply registered =
          first.registerJob(JobOptions.builder("first-job", "a.events", 100).build());
      assertThat(registered.owner()).isEqualTo(new Owner("team-a", "trainer-1"));
      assertThat(second.listJobs())
          .filteredOn(job -> job.job().equals("first-job"))
          .extracting(JobStatusReply::owner)
          .containsExactly(new Owner("team-a", "trainer-1"));
      // The same tenant is not enough: only the caller that registered it.
      assertDenied(
          () -> second.dropJob("first-job"),
          "'first-job'",
          "'trainer-1' of tenant 'team-a'",
          "'trainer-2' of tenant 'team-a'");
      assertThat(first.dropJob("first-job").dropped()).isTrue();

      second.registerJob(JobOptions.builder("second-job", "a.events", 100).build());
      assertThat(admin.dropJob("second-job").dropped()).isTrue();
    }
  }

  @Test
  void aScopedTokenReachesAndListsOnlyItsDatasets() throws Exception {
    try (FloeClient scoped = client(SCOPED)) {
      assertThat(scoped.list())
          .extracting(DatasetStatusReply::name)
          .contains("a.events", "shared")
          .doesNotContain("legacy-tenant")
          .allMatch(name -> name.startsWith("a.") || name.equals("shared"));
      assertThat(scoped.read(scoped.plan("a.events", 0, 1), root -> {})).isEqualTo(1_000);
      assertThat(scoped.status("shared").state()).isEqualTo(State.READY);

      String[] outside = {"'legacy-tenant'", "'scoped'", "a.*,shared"};
      assertDenied(() -> scoped.plan("legacy-tenant", 0, 1), outside);
      assertDenied(() -> scoped.status("legacy-tenant"), outside);
      assertDenied(
          () -> scoped.registerJob(JobOptions.builder("outside", "legacy-tenant", 100).build()),
          outside);
      // Plain Flight's ListFlights, and another caller's job on a dataset out of its scope.
      try (FlightClient raw = FlightClient.builder(allocator, node.location()).build()) {
        List<String> flights = new ArrayList<>();
        raw.listFlights(Criteria.ALL, bearer(SCOPED))
            .forEach(
                info ->
                    flights.add(
                        new String(
                            info.getDescriptor().getCommand(),
                            java.nio.charset.StandardCharsets.UTF_8)));
        assertThat(flights)
            .anyMatch(flight -> flight.contains("\"a.events\""))
            .noneMatch(flight -> flight.contains("legacy-tenant"));
      }
      try (FloeClient trainer = client(TRAINER_1)) {
        trainer.registerJob(JobOptions.builder("outside-job", "legacy-tenant", 100).build());
        try {
          assertThat(scoped.listJobs())
              .extracting(JobStatusReply::job)
              .doesNotContain("outside-job");
          assertDenied(() -> scoped.jobStatus("outside-job"), outside);
        } finally {
          trainer.dropJob("outside-job");
        }
      }
    }
  }
}
