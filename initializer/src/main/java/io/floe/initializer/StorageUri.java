package io.floe.initializer;

import java.util.Locale;
import java.util.Set;

/**
 * Where a TrainJob's dataset comes from ({@code spec.initializer.dataset.storageUri}, with what
 * Kubeflow's SDK sets beside it): {@code floe://<catalog>.<db>.<table>} names a table in one of the
 * node's catalogs; a table location (a metadata.json file or table directory on {@code s3://},
 * {@code gs://}, {@code abfs://} or local storage) names it directly; {@code
 * cache://<schema>/<table>}, the SDK's {@code DataCacheInitializer}, names the table opened from
 * {@code METADATA_LOC} when that is set (as the SDK always sets it, and as Kubeflow's own cache
 * reads it), else {@code <schema>.<table>} in catalog {@code FLOE_CATALOG}.
 *
 * @param table what the load action's {@code table} field takes
 * @param catalog what its {@code catalog} field takes, or null
 */
public record StorageUri(String table, String catalog) {
  private static final String FLOE = "floe://";
  private static final Set<String> LOCATIONS =
      Set.of("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "file");

  /** A storage URI with no {@code METADATA_LOC} and no {@code FLOE_CATALOG} beside it. */
  public static StorageUri parse(String uri) {
    return resolve(uri, null, null);
  }

  /**
   * @param uri {@code STORAGE_URI}
   * @param metadataLocation {@code METADATA_LOC}, or null: the table's metadata file, for a {@code
   *     cache://} URI only
   * @param catalog {@code FLOE_CATALOG}, or null: where a {@code cache://} URI's table is looked up
   *     when there is no metadata location; other URIs name their own catalog or none
   * @throws IllegalArgumentException naming what is wrong and what to set instead
   */
  public static StorageUri resolve(String uri, String metadataLocation, String catalog) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException(
          "No storage URI: set STORAGE_URI (the TrainJob's spec.initializer.dataset.storageUri)");
    }
    String metadata = blankToNull(metadataLocation);
    if (CacheUri.matches(uri)) {
      return ofCache(CacheUri.parse(uri), metadata, blankToNull(catalog));
    }
    if (metadata != null) {
      throw new IllegalArgumentException(
          "METADATA_LOC is read with a cache://<schema>/<table> storage URI only, not with '"
              + uri
              + "': put the table's location in STORAGE_URI, or use cache://");
    }
    String value = uri.strip();
    if (value.startsWith(FLOE)) {
      String identifier = value.substring(FLOE.length());
      if (!identifier.matches("[^./\\s]+(\\.[^./\\s]+){1,}")) {
        throw new IllegalArgumentException(
            "Invalid storage URI '" + uri + "': floe:// takes <catalog>.<db>.<table>");
      }
      return new StorageUri(identifier, null);
    }
    if (!isLocation(value)) {
      throw new IllegalArgumentException(
          "Floe loads Iceberg tables: the storage URI '"
              + uri
              + "' must be floe://<catalog>.<db>.<table>, cache://<schema>/<table> (with"
              + " METADATA_LOC or FLOE_CATALOG) or a table location (s3://, gs://, abfs://, file:)");
    }
    return new StorageUri(value, null);
  }

  private static StorageUri ofCache(CacheUri cache, String metadata, String catalog) {
    if (metadata != null) {
      String value = metadata.strip();
      if (!isLocation(value)) {
        throw new IllegalArgumentException(
            "Invalid METADATA_LOC '"
                + metadata
                + "' for "
                + cache
                + ": it must be the table's metadata.json location (s3://, s3a://, gs://, abfs://,"
                + " file: or a path)");
      }
      return new StorageUri(value, null);
    }
    if (catalog == null) {
      throw new IllegalArgumentException(
          cache
              + " names no table Floe can open: set METADATA_LOC (the table's metadata.json, as"
              + " Kubeflow's SDK does) or FLOE_CATALOG (a catalog the Floe nodes are configured"
              + " with, holding "
              + cache.identifier()
              + ")");
    }
    if (!catalog.strip().matches("[A-Za-z0-9_-]{1,64}")) {
      throw new IllegalArgumentException(
          "Invalid FLOE_CATALOG '"
              + catalog
              + "': the name of a catalog the Floe nodes are configured with (1-64 letters,"
              + " digits, '_', '-')");
    }
    if (cache.table().contains(".")) {
      throw new IllegalArgumentException(
          "Table '"
              + cache.table()
              + "' of "
              + cache
              + " holds a dot, which catalog '"
              + catalog
              + "' would read as a namespace: set METADATA_LOC instead");
    }
    return new StorageUri(cache.identifier(), catalog.strip());
  }

  private static boolean isLocation(String value) {
    if (value.startsWith("/")) {
      return true;
    }
    int colon = value.indexOf(':');
    String scheme = colon > 0 ? value.substring(0, colon).toLowerCase(Locale.ROOT) : "";
    return LOCATIONS.contains(scheme);
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value;
  }
}
