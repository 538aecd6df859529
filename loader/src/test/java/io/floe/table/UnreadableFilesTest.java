package io.floe.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.iceberg.SliceReads;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.ManifestFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table whose metadata, manifest or data files are missing or damaged fails to load with the file
 * named, NOT_FOUND for a missing one and INVALID_ARGUMENT (UNREADABLE_DATA) for one that cannot be
 * decoded, and every byte taken is returned.
 */
class UnreadableFilesTest {
  @TempDir Path dir;
  private BufferAllocator allocator;
  private TableAccess tables;
  private SliceReads reads;
  private IcebergTestTables.TestTable table;

  @BeforeEach
  void setUp() {
    allocator = new RootAllocator();
    tables = new TableAccess(StorageSettings.defaults());
    reads = new SliceReads(tables, allocator, 1);
    table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 500, TestRows.events(2));
  }

  @AfterEach
  void tearDown() {
    reads.close();
    tables.close();
    assertThat(allocator.getAllocatedMemory()).isZero();
    allocator.close();
  }

  private static Path local(String location) {
    return Path.of(URI.create(location.startsWith("file:/") ? location : "file:" + location));
  }

  private static void damage(String location) throws IOException {
    Files.write(local(location), "not what it should be".getBytes(StandardCharsets.UTF_8));
  }

  private DatasetSpec spec() {
    return DatasetSpec.of("events", table.metadataLocation());
  }

  @Test
  void aDamagedDataFileIsNamed() throws IOException {
    DataFile file = table.dataFiles().get(0);
    damage(file.location());

    assertThatThrownBy(() -> reads.readAll(spec()))
        .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.UNREADABLE_DATA))
        .hasMessageContaining("Cannot decode data file '" + file.location() + "'");
  }

  @Test
  void aMissingDataFileIsNamed() throws IOException {
    DataFile file = table.dataFiles().get(1);
    Files.delete(local(file.location()));

    assertThatThrownBy(() -> reads.readAll(spec()))
        .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.NOT_FOUND))
        .hasMessageContaining(file.location());
  }

  @Test
  void aDamagedManifestIsNamed() throws IOException {
    ManifestFile manifest = table.table().currentSnapshot().allManifests(table.table().io()).get(0);
    damage(manifest.path());

    assertThatThrownBy(() -> reads.plan(spec()))
        .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.UNREADABLE_DATA))
        .hasMessageContaining("manifest '" + manifest.path() + "'");
  }

  @Test
  void damagedTableMetadataIsNamed() throws IOException {
    String metadata = table.metadataLocation();
    damage(metadata);

    assertThatThrownBy(() -> tables.open(tables.resolve(metadata, null)))
        .satisfies(e -> assertThat(FloeException.kindOf(e)).isEqualTo(ErrorKind.UNREADABLE_DATA))
        .hasMessageContaining("Cannot decode table metadata '")
        .hasMessageContaining(local(metadata).toString());
  }
}
