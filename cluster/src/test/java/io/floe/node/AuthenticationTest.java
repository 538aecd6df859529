package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.protocol.DatasetStatusReply.State;
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
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightCallHeaders;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.HeaderCallOption;
import org.apache.arrow.flight.SyncPutListener;
import org.apache.arrow.flight.auth.ClientAuthHandler;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node with a token file and no anonymous callers: every call needs a known bearer token, DoGet,
 * Handshake, DoPut and DoExchange included, and is refused with Floe's error code; readers read and
 * run jobs, only operators load and drop; a changed token file takes effect without a restart.
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
  void handshakePutAndExchangeNeedATokenToo() throws Exception {
    Schema schema = new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true))));
    try (FlightClient raw = FlightClient.builder(allocator, node.location()).build();
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
      for (String token : new String[] {null, "not-a-known-token-0000"}) {
        CallOption[] as = bearer(token);
        String why = token == null ? "needs a bearer token" : "Unknown bearer token";
        assertRefused(
            () -> handshake(as), FlightStatusCode.UNAUTHENTICATED, ErrorCode.UNAUTHENTICATED, why);
        assertRefused(
            () -> put(raw, root, as),
            FlightStatusCode.UNAUTHENTICATED,
            ErrorCode.UNAUTHENTICATED,
            why);
        assertRefused(
            () -> exchange(raw, as),
            FlightStatusCode.UNAUTHENTICATED,
            ErrorCode.UNAUTHENTICATED,
            why);
      }
      // With a token: the handshake has nothing to exchange, and Floe takes no uploads.
      CallOption[] reader = bearer(READER);
      handshake(reader);
      assertRefused(
          () -> put(raw, root, reader),
          FlightStatusCode.UNIMPLEMENTED,
          ErrorCode.UNIMPLEMENTED,
          "DoPut is not offered");
      assertRefused(
          () -> exchange(raw, reader),
          FlightStatusCode.UNIMPLEMENTED,
          ErrorCode.UNIMPLEMENTED,
          "DoExchange is not offered");
    }
  }

  private static CallOption[] bearer(String token) {
    if (token == null) {
      return new CallOption[0];
    }
    FlightCallHeaders headers = new FlightCallHeaders();
    headers.insert("authorization", "Bearer " + token);
    return new CallOption[] {new HeaderCallOption(headers)};
  }

  /** On a client of its own: Flight's client sends a handshake's call token on every later call. */
  private void handshake(CallOption... options) throws Exception {
    try (FlightClient client = FlightClient.builder(allocator, node.location()).build()) {
      client.authenticate(new SilentHandshake(), options);
    }
  }

  private static void put(FlightClient raw, VectorSchemaRoot root, CallOption... options) {
    FlightClient.ClientStreamListener upload =
        raw.startPut(FlightDescriptor.path("events"), root, new SyncPutListener(), options);
    upload.completed();
    upload.getResult();
  }

  private static void exchange(FlightClient raw, CallOption... options) throws Exception {
    try (FlightClient.ExchangeReaderWriter exchange =
        raw.doExchange(FlightDescriptor.path("events"), options)) {
      exchange.getWriter().completed();
      exchange.getReader().next();
    }
  }

  /** A Flight handshake that sends nothing: the bearer token in the headers is all there is. */
  private static final class SilentHandshake implements ClientAuthHandler {
    @Override
    public void authenticate(ClientAuthSender outgoing, Iterator<byte[]> incoming) {}

    @Override
    public byte[] getCallToken() {
      return new byte[0];
    }
  }

  @Test
  void readersReadAndRunJobsButOnlyOperatorsManageDatasets() throws Exception {
    try (FloeClient reader = FloeClient.connect(allocator, node.location(), READER);
        FloeClient operator = FloeClient.connect(allocator, node.location(), OPERATOR)) {
      assertThat(reader.read(reader.plan("events", 0, 1), root -> {})).isEqualTo(1_000);
      assertThat(reader.status("events").state()).isEqualTo(State.READY);
      reader.registerJob(JobOptions.builder("auth-job", "events", 100).build());
      assertThat(reader.dropJob("auth-job").dropped()).isTrue();
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
      assertThat(operator.status("events").state()).isEqualTo(State.READY);
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
