package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
import io.floe.client.JobOptions;
import io.floe.initializer.DatasetInitializer;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.tenant.Owner;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java client and the dataset initializer reading their token from a file, as a pod reads its
 * projected ServiceAccount token, against a node with tokens on: the file is read again when it is
 * rewritten, so the next call goes out as the caller the new token names (the owner recorded for a
 * job says which); the initializer takes the file from FLOE_TOKEN_FILE.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RenewedTokenFileTest {
  private static final String LOADER = "loader-token-0123456789abcdef";
  private static final String FIRST = "first-trainer-token-0123456789";
  // Another length too, as a renewed projected token has: the file's size changes with it.
  private static final String SECOND = "second-trainer-token-0123456789abcdef";

  private Path dir;
  private FloeNode node;
  private BufferAllocator allocator;
  private String table;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    this.dir = dir;
    table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 500, TestRows.events(4))
            .metadataLocation();
    Path tokens = dir.resolve("tokens");
    Files.writeString(
        tokens,
        String.join(
            "\n",
            "operator loader " + LOADER + " tenant=team-a",
            "reader trainer-1 " + FIRST + " tenant=team-a",
            "reader trainer-2 " + SECOND + " tenant=team-a",
            ""));
    node =
        TestNodes.start(
            "floe.security.auth.anonymous = none\n"
                + "floe.security.auth.tokens-file = \""
                + tokens
                + "\"\n");
    allocator = new RootAllocator();
  }

  @AfterAll
  void stop() throws Exception {
    allocator.close();
    node.close();
  }

  @Test
  void theInitializerLoadsWithTheTokenInFloeTokenFile() throws Exception {
    Path projected = Files.writeString(dir.resolve("initializer-token"), LOADER + "\n");
    int exit =
        DatasetInitializer.run(
            Map.of(
                "FLOE_ADDRESS",
                node.location().getUri().toString(),
                "STORAGE_URI",
                table,
                "FLOE_DATASET",
                "from-file",
                "FLOE_TOKEN_FILE",
                projected.toString()),
            "--poll",
            "PT0.1S");
    assertThat(exit).isZero();
    try (FloeClient loader = FloeClient.connect(allocator, node.location(), LOADER)) {
      assertThat(loader.status("from-file").state()).isEqualTo(State.READY);
      assertThat(loader.status("from-file").owner()).isEqualTo(new Owner("team-a", "loader"));
    }
    // No token at all is refused (exit 1), so the file above is what let it in.
    Map<String, String> anonymous =
        Map.of(
            "FLOE_ADDRESS",
            node.location().getUri().toString(),
            "STORAGE_URI",
            table,
            "FLOE_DATASET",
            "without-token");
    assertThat(DatasetInitializer.run(anonymous, "--poll", "PT0.1S")).isEqualTo(1);
  }

  @Test
  void aRewrittenTokenFileIsReadAgainForTheNextCall() throws Exception {
    try (FloeClient loader = FloeClient.connect(allocator, node.location(), LOADER)) {
      loader.load(
          new io.floe.protocol.LoadRequest(io.floe.spec.DatasetSpec.of("events", table), true));
    }
    Path projected = dir.resolve("trainer-token");
    Files.writeString(projected, FIRST + "\n");
    try (FloeClient trainer =
        FloeClient.builder(allocator, node.location()).tokenFile(projected).build()) {
      assertThat(trainer.registerJob(JobOptions.builder("before", "events", 100).build()).owner())
          .isEqualTo(new Owner("team-a", "trainer-1"));
      assertThat(trainer.read(trainer.plan("events", 0, 1), root -> {})).isEqualTo(1_000);

      // The kubelet swaps in the renewed token; the same client goes on, as the token's caller.
      Files.writeString(projected, SECOND + "\n");
      assertThat(trainer.registerJob(JobOptions.builder("after", "events", 100).build()).owner())
          .isEqualTo(new Owner("team-a", "trainer-2"));
      assertThat(trainer.read(trainer.plan("events", 0, 1), root -> {})).isEqualTo(1_000);

      // A file gone is an error of the call, not the last token again.
      Files.delete(projected);
      assertThatThrownBy(() -> trainer.status("events"))
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageContaining(projected.toString());
      Files.writeString(projected, FIRST);
      assertThat(trainer.dropJob("before").dropped()).isTrue();
    }
  }

  @Test
  void aMissingOrEmptyFileAndATokenBesideAFileAreRefusedWhenTheClientIsBuilt() throws Exception {
    Path missing = dir.resolve("no-such-token");
    assertThatThrownBy(
            () -> FloeClient.builder(allocator, node.location()).tokenFile(missing).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(missing.toString());
    Path empty = Files.writeString(dir.resolve("empty-token"), "\n");
    assertThatThrownBy(
            () -> FloeClient.builder(allocator, node.location()).tokenFile(empty).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("empty or with whitespace")
        .hasMessageContaining(empty.toString());
    Path file = Files.writeString(dir.resolve("a-token"), FIRST);
    assertThatThrownBy(
            () ->
                FloeClient.builder(allocator, node.location()).token(FIRST).tokenFile(file).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("exclude each other");
  }
}
