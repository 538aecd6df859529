package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node with a token file and no anonymous callers: every call needs a known bearer token, DoGet
 * included; readers read and run jobs, only operators load and drop; a changed token file takes
 * effect without a restart.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AuthenticationTest {
  private static final String OPERATOR = "operator-token-0123456789abcdef";
  private static final String READER = "reader-token-0123456789abcdef";
  private static final String ROTATED = "reader-token-rotated-0123456789";

  private FloeNode node;
  private BufferAllocator allocator;
  private Path tokens;
  private IcebergTestTables.TestTable table;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 500, TestRows.events(2));
    tokens = dir.resolve("tokens");
    Files.writeString(
        tokens,
        "# role name token\noperator ops " + OPERATOR + "\nreader trainer " + READER + "\n");
    node =
        TestNodes.start(
            "floe.security.auth.anonymous = none\n"
                + "floe.security.auth.tokens-file = \""
                + tokens
                + "\"\n");
    allocator = new RootAllocator();
    try (FloeClient operator = FloeClient.connect(allocator, node.location(), OPERATOR)) {
      operator.load(new LoadRequest(DatasetSpec.of("events", table.metadataLocation()), true));
    }
  }

  @AfterAll
  void stop() throws Exception {
    allocator.close();
    node.close();
  }

  private static void assertRefused(
      ThrowingCallable call, FlightStatusCode status, ErrorCode code, String message) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).as(e.getMessage()).isEqualTo(status);
              assertThat(ErrorCode.of(e)).as(e.getMessage()).contains(code);
              assertThat(e.status().description()).contains(message);
            });
  }

  @Test
  void callsWithoutAKnownTokenAreUnauthenticated() throws Exception {
    try (FloeClient anonymous = FloeClient.connect(allocator, node.location());
        FloeClient forged =
            FloeClient.connect(allocator, node.location(), "not-a-known-token-0000");
        FloeClient reader = FloeClient.connect(allocator, node.location(), READER)) {
      for (FloeClient refused : new FloeClient[] {anonymous, forged}) {
        String why = refused == anonymous ? "needs a bearer token" : "Unknown bearer token";
        assertRefused(
            refused::list, FlightStatusCode.UNAUTHENTICATED, ErrorCode.UNAUTHENTICATED, why);
        assertRefused(
            () -> refused.plan("events", 0, 1),
            FlightStatusCode.UNAUTHENTICATED,
            ErrorCode.UNAUTHENTICATED,
            why);
      }
      // A ticket planned by a reader is no use without a token: DoGet is authenticated too.
      FlightInfo plan = reader.plan("events", 0, 1);
      try (FlightClient raw = FlightClient.builder(allocator, node.location()).build()) {
        assertRefused(
            () -> raw.getStream(plan.getEndpoints().get(0).getTicket()).next(),
            FlightStatusCode.UNAUTHENTICATED,
            ErrorCode.UNAUTHENTICATED,
            "needs a bearer token");
      }
    }
  }

  @Test
  void readersReadAndRunJobsButOnlyOperatorsManageDatasets() throws Exception {
    try (FloeClient reader = FloeClient.connect(allocator, node.location(), READER);
        FloeClient operator = FloeClient.connect(allocator, node.location(), OPERATOR)) {
      assertThat(reader.read(reader.plan("events", 0, 1), root -> {})).isEqualTo(1_000);
      assertThat(reader.status("events").path("state").asText()).isEqualTo("READY");
      reader.registerJob(JobOptions.builder("auth-job", "events", 100).build());
      assertThat(reader.dropJob("auth-job").json().path("dropped").asBoolean()).isTrue();
      assertRefused(
          () ->
              reader.load(new LoadRequest(DatasetSpec.of("other", table.metadataLocation()), true)),
          FlightStatusCode.UNAUTHORIZED,
          ErrorCode.PERMISSION_DENIED,
          "needs the operator role; 'trainer' is a reader");
      assertRefused(
          () -> reader.drop("events"),
          FlightStatusCode.UNAUTHORIZED,
          ErrorCode.PERMISSION_DENIED,
          "operator");
      assertThat(operator.status("events").path("state").asText()).isEqualTo("READY");
    }
  }

  @Test
  void aChangedTokenFileTakesEffectWithoutARestart() throws Exception {
    Files.writeString(tokens, "operator ops " + OPERATOR + "\nreader trainer " + ROTATED + "\n");
    // The file's time must change for the node to read it again; make sure it does.
    Files.setLastModifiedTime(tokens, FileTime.from(Instant.now().plusSeconds(5)));
    try (FloeClient old = FloeClient.connect(allocator, node.location(), READER);
        FloeClient rotated = FloeClient.connect(allocator, node.location(), ROTATED)) {
      Awaitility.await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .until(() -> rotated.list() != null);
      assertRefused(
          old::list, FlightStatusCode.UNAUTHENTICATED, ErrorCode.UNAUTHENTICATED, "Unknown");
    } finally {
      Files.writeString(tokens, "operator ops " + OPERATOR + "\nreader trainer " + READER + "\n");
      Files.setLastModifiedTime(tokens, FileTime.from(Instant.now().plusSeconds(10)));
      try (FloeClient restored = FloeClient.connect(allocator, node.location(), READER)) {
        Awaitility.await()
            .atMost(Duration.ofSeconds(20))
            .ignoreExceptions()
            .until(() -> restored.list() != null);
      }
    }
  }

  @Test
  void aNodeNobodyCouldReachDoesNotStart() {
    assertThatThrownBy(
            () ->
                FloeSettings.fromConfig(
                    ConfigFactory.parseString(
                            "floe.security.auth.anonymous = none\n"
                                + "floe.security.auth.tokens-file = \"\"")
                        .withFallback(ConfigFactory.load())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("FLOE_AUTH_TOKENS_FILE");
  }
}
