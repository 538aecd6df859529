package io.floe.initializer;

/**
 * The storage URI that Kubeflow's SDK gives a TrainJob for its data cache ({@code
 * DataCacheInitializer(storage_uri="cache://<schema>/<table>", ...)}): a schema (an Iceberg
 * namespace, dotted when nested) and a table name. Kubeflow's own cache uses them only to name the
 * table it opens from {@code METADATA_LOC}; Floe does the same, and with no {@code METADATA_LOC}
 * looks {@code <schema>.<table>} up in a catalog the Floe nodes are configured with.
 *
 * @param schema the Iceberg namespace, e.g. {@code analytics} or {@code a.b}
 * @param table the table's name within it
 */
public record CacheUri(String schema, String table) {
  static final String PREFIX = "cache://";
  private static final String FORM = "cache://<schema>/<table>";

  static boolean matches(String uri) {
    return uri != null && uri.strip().regionMatches(true, 0, PREFIX, 0, PREFIX.length());
  }

  /**
   * @throws IllegalArgumentException naming what is wrong with {@code uri}, which must start with
   *     {@code cache://}
   */
  public static CacheUri parse(String uri) {
    String value = uri.strip();
    String rest = value.substring(PREFIX.length());
    if (rest.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
      throw invalid(uri, "it holds whitespace");
    }
    int query = indexOfAny(rest, "?#");
    if (query >= 0) {
      throw invalid(
          uri, "'" + rest.substring(query) + "' follows the table (no query or fragment)");
    }
    int slash = rest.indexOf('/');
    String schema = slash < 0 ? rest : rest.substring(0, slash);
    String table = slash < 0 ? "" : rest.substring(slash + 1);
    if (schema.isEmpty()) {
      throw invalid(uri, "no schema before the table");
    }
    if (table.isEmpty()) {
      throw invalid(uri, "no table after schema '" + schema + "'");
    }
    if (table.contains("/")) {
      throw invalid(uri, "more than one segment after the schema ('" + table + "')");
    }
    if (schema.startsWith(".") || schema.endsWith(".") || schema.contains("..")) {
      throw invalid(uri, "schema '" + schema + "' has an empty part between dots");
    }
    return new CacheUri(schema, table);
  }

  /** The Iceberg identifier in a catalog: {@code <schema>.<table>}. */
  public String identifier() {
    return schema + "." + table;
  }

  @Override
  public String toString() {
    return PREFIX + schema + "/" + table;
  }

  private static IllegalArgumentException invalid(String uri, String what) {
    return new IllegalArgumentException(
        "Invalid storage URI '" + uri + "': " + what + "; Kubeflow's cache takes " + FORM);
  }

  private static int indexOfAny(String value, String chars) {
    for (int i = 0; i < value.length(); i++) {
      if (chars.indexOf(value.charAt(i)) >= 0) {
        return i;
      }
    }
    return -1;
  }
}
