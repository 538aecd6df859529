package io.floe.table;

import com.typesafe.config.Config;
import io.floe.spec.TableSource;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;

/**
 * The Iceberg catalogs a node can open tables from, each as the properties Iceberg's {@link
 * CatalogUtil} builds it with ({@code type} = rest, glue, hive, jdbc, hadoop or nessie, or {@code
 * catalog-impl}; {@code uri}, {@code warehouse}, {@code s3.*}, ...). Read from the {@code
 * floe.catalogs} block, one sub-block per catalog, and from {@code FLOE_CATALOG__<NAME>__*}
 * variables ({@link EnvironmentProperties}); variables win. Every node of a cluster must have the
 * same catalogs, since slices open their table's files on whichever node holds them.
 */
public final class CatalogSettings {
  private final Map<String, Map<String, String>> catalogs;

  private CatalogSettings(Map<String, Map<String, String>> catalogs) {
    Map<String, Map<String, String>> copy = new TreeMap<>();
    catalogs.forEach(
        (name, properties) -> {
          check(name, properties);
          copy.put(name, Map.copyOf(properties));
        });
    // Sorted, so messages list the catalogs in a stable order.
    this.catalogs = java.util.Collections.unmodifiableMap(copy);
  }

  public static CatalogSettings none() {
    return new CatalogSettings(Map.of());
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Reads the {@code floe.catalogs} block and the {@code FLOE_CATALOG__*} variables of env. */
  public static CatalogSettings fromConfig(Config catalogs, Map<String, String> env) {
    Builder builder = builder();
    for (String name : catalogs.root().keySet()) {
      StorageSettings.flatten(catalogs.getConfig(com.typesafe.config.ConfigUtil.quoteString(name)))
          .forEach((key, value) -> builder.property(name, key, value));
    }
    EnvironmentProperties.catalogs(env)
        .forEach((name, properties) -> properties.forEach((k, v) -> builder.property(name, k, v)));
    return builder.build();
  }

  private static void check(String name, Map<String, String> properties) {
    if (!TableSource.isCatalogName(name)) {
      throw new IllegalArgumentException(
          "Invalid catalog name '"
              + name
              + "' in floe.catalogs: use 1-64 letters, digits, '_' or '-' (a dot would be read"
              + " as part of a table identifier)");
    }
    if (!properties.containsKey(CatalogUtil.ICEBERG_CATALOG_TYPE)
        && !properties.containsKey(CatalogProperties.CATALOG_IMPL)) {
      throw new IllegalArgumentException(
          "Catalog '"
              + name
              + "' in floe.catalogs has no 'type' (rest, glue, hive, jdbc, hadoop, nessie) and no"
              + " 'catalog-impl'; its properties: "
              + Secrets.redacted(properties).keySet());
    }
  }

  public Set<String> names() {
    return catalogs.keySet();
  }

  public Optional<Map<String, String>> properties(String name) {
    return Optional.ofNullable(catalogs.get(name));
  }

  @Override
  public String toString() {
    Map<String, Map<String, String>> shown = new TreeMap<>();
    catalogs.forEach((name, properties) -> shown.put(name, Secrets.redacted(properties)));
    return "CatalogSettings" + shown;
  }

  public static final class Builder {
    private final Map<String, Map<String, String>> catalogs = new LinkedHashMap<>();

    private Builder() {}

    public Builder property(String catalog, String key, String value) {
      catalogs.computeIfAbsent(catalog, c -> new LinkedHashMap<>()).put(key, value);
      return this;
    }

    public Builder catalog(String catalog, Map<String, String> properties) {
      properties.forEach((k, v) -> property(catalog, k, v));
      return this;
    }

    public CatalogSettings build() {
      return new CatalogSettings(catalogs);
    }
  }
}
