package io.floe.initializer;

import java.util.Locale;
import java.util.Set;

/**
 * Where a TrainJob's dataset comes from ({@code spec.initializer.dataset.storageUri}): {@code
 * floe://<catalog>.<db>.<table>} names a table in one of the node's catalogs; a table location (a
 * metadata.json file or table directory on {@code s3://}, {@code gs://}, {@code abfs://} or local
 * storage) names it directly.
 *
 * @param table what the load action's {@code table} field takes
 */
public record StorageUri(String table) {
  private static final String FLOE = "floe://";
  private static final Set<String> LOCATIONS =
      Set.of("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "file");

  public static StorageUri parse(String uri) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException(
          "No storage URI: set STORAGE_URI (the TrainJob's spec.initializer.dataset.storageUri)");
    }
    String value = uri.strip();
    if (value.startsWith(FLOE)) {
      String identifier = value.substring(FLOE.length());
      if (!identifier.matches("[^./\\s]+(\\.[^./\\s]+){1,}")) {
        throw new IllegalArgumentException(
            "Invalid storage URI '" + uri + "': floe:// takes <catalog>.<db>.<table>");
      }
      return new StorageUri(identifier);
    }
    if (value.startsWith("/")) {
      return new StorageUri(value);
    }
    int colon = value.indexOf(':');
    String scheme = colon > 0 ? value.substring(0, colon).toLowerCase(Locale.ROOT) : "";
    if (!LOCATIONS.contains(scheme)) {
      throw new IllegalArgumentException(
          "Floe loads Iceberg tables: the storage URI '"
              + uri
              + "' must be floe://<catalog>.<db>.<table> or a table location (s3://, gs://,"
              + " abfs://, file:)");
    }
    return new StorageUri(value);
  }
}
