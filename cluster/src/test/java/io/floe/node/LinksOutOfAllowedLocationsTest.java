package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node confined to a directory judges every file of a table by where it really is: a data
 * directory, a metadata file, a manifest list or a delete file inside the directory that is a
 * symbolic link to somewhere outside it is refused PERMISSION_DENIED, and the reply says neither
 * where the link leads nor what the file there holds. Links that stay inside load as before.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LinksOutOfAllowedLocationsTest {
  private static final String SECRET = "SECRET_TOKEN_123";

  private Path allowed;
  private Path outside;
  private FloeNode node;
  private BufferAllocator allocator;
  private FloeClient client;

  @BeforeAll
  void start(@TempDir Path dir) throws IOException {
    allowed = Files.createDirectories(dir.resolve("allowed"));
    outside = Files.createDirectories(dir.resolve("elsewhere"));
    node = TestNodes.start("floe.security.allowed-locations = \"" + allowed + "/\"\n");
    allocator = new RootAllocator();
    client = FloeClient.connect(allocator, node.location());
  }

  @AfterAll
  void stop() throws Exception {
    client.close();
    allocator.close();
    node.close();
  }

  private IcebergTestTables.TestTable table(String name) {
    return IcebergTestTables.in(allowed)
        .create(name, TestRows.EVENTS)
        .appendFiles(2, 100, TestRows.events(3));
  }

  private static Path local(String location) {
    return Path.of(URI.create(location.startsWith("file:/") ? location : "file:" + location));
  }

  /** Moves {@code path} to {@code target} and leaves a link to it where it was. */
  private static void replaceByLink(Path path, Path target) throws IOException {
    Files.move(path, target);
    Files.createSymbolicLink(path, target);
  }

  private void assertRefused(String dataset, String location) {
    assertThatThrownBy(() -> client.load(new LoadRequest(DatasetSpec.of(dataset, location), true)))
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.UNAUTHORIZED);
              assertThat(ErrorCode.of(e)).contains(ErrorCode.PERMISSION_DENIED);
              assertThat(e.status().description())
                  .contains("symbolic link")
                  .contains("outside the locations this node may read")
                  .doesNotContain(outside.toString())
                  .doesNotContain(SECRET);
            });
    client.drop(dataset);
  }

  @Test
  void aDataDirectoryLinkedOutsideIsRefused() throws IOException {
    IcebergTestTables.TestTable table = table("data_linked");
    replaceByLink(local(table.location()).resolve("data"), outside.resolve("data_linked-data"));

    assertRefused("data-linked", table.metadataLocation());
  }

  @Test
  void aMetadataFileLinkedOutsideIsRefusedUnread() throws IOException {
    IcebergTestTables.TestTable table = table("metadata_linked");
    Path secret = Files.writeString(outside.resolve("secret.txt"), SECRET + " is what it holds\n");
    Path link = local(table.location()).resolve("metadata/v99.metadata.json");
    Files.createSymbolicLink(link, secret);

    assertRefused("metadata-linked", link.toString());
  }

  @Test
  void aManifestListLinkedOutsideIsRefused() throws IOException {
    IcebergTestTables.TestTable table = table("list_linked");
    Path list = local(table.table().currentSnapshot().manifestListLocation());
    replaceByLink(list, outside.resolve("list_linked-" + list.getFileName()));

    assertRefused("list-linked", table.metadataLocation());
  }

  @Test
  void aDeleteFileLinkedOutsideIsRefused() throws IOException {
    IcebergTestTables.TestTable table =
        table("delete_linked").deletePositions(row -> (long) row.getField("id") % 10 == 0);
    Path deletes = local(table.deleteFiles().get(0).location());
    replaceByLink(deletes, outside.resolve("delete_linked-" + deletes.getFileName()));

    assertRefused("delete-linked", table.metadataLocation());
  }

  @Test
  void linksThatStayInsideLoad() throws IOException {
    IcebergTestTables.TestTable table = table("linked_inside");
    replaceByLink(local(table.location()).resolve("data"), allowed.resolve("linked_inside-data"));

    assertThat(
            client
                .load(
                    new LoadRequest(
                        DatasetSpec.of("linked-inside", table.metadataLocation()), true))
                .state())
        .isEqualTo(State.READY);
    assertThat(client.status("linked-inside").rows()).isEqualTo(200);
    client.drop("linked-inside");
  }
}
