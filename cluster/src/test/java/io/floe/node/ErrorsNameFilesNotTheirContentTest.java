package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
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
 * A table file inside the allowed locations that cannot be decoded is the caller's error
 * (UNREADABLE_DATA) whose reply names the file and what is wrong with it in general terms, never
 * quoting the file: not a token of a metadata file that is not JSON, not the value of a field of
 * the wrong type, not the bytes of a data file that is not Parquet.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErrorsNameFilesNotTheirContentTest {
  private static final String SECRET = "SECRET_TOKEN_123";

  private Path allowed;
  private FloeNode node;
  private BufferAllocator allocator;
  private FloeClient client;

  @BeforeAll
  void start(@TempDir Path dir) throws IOException {
    allowed = Files.createDirectories(dir.resolve("allowed"));
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
        .appendFiles(1, 100, TestRows.events(4));
  }

  private static Path local(String location) {
    return Path.of(URI.create(location.startsWith("file:/") ? location : "file:" + location));
  }

  /**
   * Writes {@code content} over a table's file, dropping the checksum Hadoop's local file system
   * keeps beside it, so what is read is the content itself.
   */
  private static void rewrite(Path file, String content) throws IOException {
    Files.deleteIfExists(file.resolveSibling("." + file.getFileName() + ".crc"));
    Files.writeString(file, content);
  }

  /**
   * The load fails UNREADABLE_DATA naming {@code file} and {@code what}, quoting none of {@code
   * content}.
   */
  private void assertUnreadable(
      String dataset, String location, Path file, String what, String... content) {
    assertThatThrownBy(() -> client.load(new LoadRequest(DatasetSpec.of(dataset, location), true)))
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
              assertThat(ErrorCode.of(e)).contains(ErrorCode.UNREADABLE_DATA);
              assertThat(e.status().description())
                  .contains(file.getFileName().toString())
                  .contains(what)
                  .doesNotContain(SECRET);
              for (String quoted : content) {
                assertThat(e.status().description()).doesNotContain(quoted);
              }
            });
    client.drop(dataset);
  }

  @Test
  void aMetadataFileThatIsNotJson() throws IOException {
    Path metadata = Files.createDirectories(allowed.resolve("not_json/metadata"));
    Path file = Files.writeString(metadata.resolve("v1.metadata.json"), SECRET + " and more\n");

    assertUnreadable(
        "not-json",
        file.toString(),
        file,
        "is not an Iceberg table metadata file (not valid JSON)");
  }

  @Test
  void aMetadataFieldOfTheWrongType() throws IOException {
    IcebergTestTables.TestTable table = table("wrong_type");
    Path file = local(table.metadataLocation());
    String json = Files.readString(file);
    String typo =
        json.replaceFirst("\"location\"\\s*:\\s*\"[^\"]*\"", "\"location\":[\"" + SECRET + "\"]");
    assertThat(typo).isNotEqualTo(json);
    rewrite(file, typo);

    assertUnreadable(
        "wrong-type", table.metadataLocation(), file, "is not valid Iceberg table metadata");
  }

  @Test
  void aMetadataFileThatIsAJsonArray() throws IOException {
    Path metadata = Files.createDirectories(allowed.resolve("array/metadata"));
    Path file = Files.writeString(metadata.resolve("v1.metadata.json"), "[\"" + SECRET + "\"]");

    assertUnreadable("array", file.toString(), file, "is not valid Iceberg table metadata");
  }

  @Test
  void aDataFileThatIsNotParquet() throws IOException {
    IcebergTestTables.TestTable table = table("not_parquet");
    Path file = local(table.dataFiles().get(0).location());
    rewrite(file, "PAR1 " + SECRET + " 2026");

    // Parquet's own message quotes the last bytes, where it looked for its magic number.
    assertUnreadable(
        "not-parquet", table.metadataLocation(), file, "not a Parquet file", "50, 48, 50, 54");
  }
}
