package io.floe.table;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.floe.error.ErrorKind;
import io.floe.util.Excerpt;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.util.JsonUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a table's metadata file as Iceberg's {@link TableMetadataParser#read} does, in two steps so
 * each failure is told apart: reading the file fails as storage does ({@link StorageFailures}); a
 * file that is not JSON, or JSON that is not Iceberg table metadata, is UNREADABLE with a message
 * naming the file and what is wrong in general terms. Jackson's and Iceberg's own messages quote
 * the file (its first token, a field's value), so they go to the node's log at DEBUG only.
 */
final class TableMetadataFile {
  private static final Logger LOG = LoggerFactory.getLogger(TableMetadataFile.class);

  private TableMetadataFile() {}

  /**
   * @throws StorageFailure when the file cannot be read or is not table metadata, naming it
   */
  static TableMetadata read(FileIO io, String location) {
    InputFile file = io.newInputFile(location);
    JsonNode json;
    try (InputStream in = open(file)) {
      json = JsonUtil.mapper().readTree(in);
    } catch (JsonProcessingException e) {
      throw unreadable(location, "is not an Iceberg table metadata file (not valid JSON)", e);
    } catch (IOException | RuntimeException e) {
      throw StorageFailures.translateReading(
          e, "table metadata '" + Excerpt.location(location) + "'");
    }
    try {
      return TableMetadataParser.fromJson(file, json);
    } catch (RuntimeException e) {
      // Iceberg's parser throws IllegalArgumentException and its kin, quoting the field's value.
      throw unreadable(
          location,
          "is not valid Iceberg table metadata (a field is missing, of the wrong type or holds a"
              + " value Iceberg does not know)",
          e);
    }
  }

  private static InputStream open(InputFile file) throws IOException {
    InputStream in = file.newStream();
    if (TableMetadataParser.Codec.fromFileName(file.location()) == TableMetadataParser.Codec.GZIP) {
      try {
        return new GZIPInputStream(in);
      } catch (IOException | RuntimeException e) {
        in.close();
        throw e;
      }
    }
    return in;
  }

  private static StorageFailure unreadable(String location, String what, Exception cause) {
    LOG.debug("Table metadata '{}' {}", Excerpt.location(location), what, cause);
    return new StorageFailure(
        ErrorKind.UNREADABLE_DATA,
        "Table metadata '" + Excerpt.location(location) + "' " + what,
        cause);
  }
}
