package io.floe.table;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Iceberg properties set through environment variables, read the way PyIceberg reads {@code
 * PYICEBERG_CATALOG__...}: a double underscore separates the parts of a property name and a single
 * underscore stands for a hyphen, everything in lower case. So an operator's ConfigMap reaches
 * every catalog and FileIO property, not only the few with variables of their own:
 *
 * <ul>
 *   <li>{@code FLOE_CATALOG__LAKE__URI=http://rest:8181} sets {@code uri} of catalog {@code lake};
 *   <li>{@code FLOE_CATALOG__LAKE__S3__PATH_STYLE_ACCESS=true} sets its {@code
 *       s3.path-style-access};
 *   <li>{@code FLOE_STORAGE__S3__ENDPOINT=http://minio:9000} sets {@code s3.endpoint} for tables
 *       named by location.
 * </ul>
 */
final class EnvironmentProperties {
  static final String CATALOG_PREFIX = "FLOE_CATALOG__";
  static final String STORAGE_PREFIX = "FLOE_STORAGE__";

  private EnvironmentProperties() {}

  /** Storage properties from {@code FLOE_STORAGE__*}. */
  static Map<String, String> storage(Map<String, String> env) {
    Map<String, String> properties = new TreeMap<>();
    env.forEach(
        (name, value) -> {
          if (name.startsWith(STORAGE_PREFIX) && name.length() > STORAGE_PREFIX.length()) {
            properties.put(propertyName(name.substring(STORAGE_PREFIX.length())), value);
          }
        });
    return properties;
  }

  /** Catalog properties from {@code FLOE_CATALOG__<NAME>__*}, by lower-case catalog name. */
  static Map<String, Map<String, String>> catalogs(Map<String, String> env) {
    Map<String, Map<String, String>> catalogs = new TreeMap<>();
    env.forEach(
        (name, value) -> {
          if (!name.startsWith(CATALOG_PREFIX)) {
            return;
          }
          String rest = name.substring(CATALOG_PREFIX.length());
          int split = rest.indexOf("__");
          if (split <= 0 || split + 2 >= rest.length()) {
            throw new IllegalArgumentException(
                "Invalid environment variable "
                    + name
                    + ": expected FLOE_CATALOG__<NAME>__<PROPERTY>, e.g. FLOE_CATALOG__LAKE__URI");
          }
          String catalog = rest.substring(0, split).toLowerCase(Locale.ROOT);
          catalogs
              .computeIfAbsent(catalog, c -> new LinkedHashMap<>())
              .put(propertyName(rest.substring(split + 2)), value);
        });
    return catalogs;
  }

  /** {@code S3__PATH_STYLE_ACCESS} → {@code s3.path-style-access}. */
  static String propertyName(String variablePart) {
    return variablePart.toLowerCase(Locale.ROOT).replace("__", ".").replace('_', '-');
  }
}
