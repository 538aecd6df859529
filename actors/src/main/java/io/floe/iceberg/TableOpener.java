package io.floe.iceberg;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.relocated.com.google.common.base.Preconditions;

/**
 * Opens read-only Iceberg tables straight from their metadata, with no catalog: either the location
 * of a {@code *.metadata.json} file, or a table directory whose {@code metadata/version-hint.text}
 * names the current version (as Hadoop tables keep it). One FileIO serves every table on the node;
 * it is closed with the opener.
 */
public final class TableOpener implements AutoCloseable {
  private final HadoopFileIO io;

  public TableOpener(StorageSettings settings) {
    this.io = new HadoopFileIO(settings.toHadoopConfiguration());
  }

  public FileIO io() {
    return io;
  }

  /**
   * @throws NotFoundException when nothing readable is at {@code location}
   */
  public Table open(String location) {
    Preconditions.checkArgument(
        location != null && !location.isBlank(), "Invalid table location: '%s'", location);
    String normalized = normalize(location.trim());
    String metadata =
        normalized.endsWith(".metadata.json") ? normalized : currentMetadataOf(normalized);
    if (!io.newInputFile(metadata).exists()) {
      throw new NotFoundException("No Iceberg table metadata at '%s'", metadata);
    }
    return new BaseTable(new StaticTableOperations(metadata, io), metadata);
  }

  private String currentMetadataOf(String tableDir) {
    String dir = tableDir.endsWith("/") ? tableDir.substring(0, tableDir.length() - 1) : tableDir;
    InputFile hint = io.newInputFile(dir + "/metadata/version-hint.text");
    if (!hint.exists()) {
      throw new NotFoundException(
          "No Iceberg table at '%s': expected a *.metadata.json location or a table directory"
              + " with metadata/version-hint.text",
          tableDir);
    }
    try (InputStream in = hint.newStream()) {
      String version = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      return dir + "/metadata/v" + version + ".metadata.json";
    } catch (IOException e) {
      throw new NotFoundException(e, "Cannot read version hint of table '%s'", tableDir);
    }
  }

  /** Plain paths become {@code file:} URIs so Hadoop does not resolve them against fs.defaultFS. */
  private static String normalize(String location) {
    if (location.contains("://") || location.startsWith("file:")) {
      return location;
    }
    return "file:" + java.nio.file.Path.of(location).toAbsolutePath().normalize();
  }

  @Override
  public void close() {
    io.close();
  }
}
