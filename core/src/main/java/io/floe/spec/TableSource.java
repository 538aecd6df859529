package io.floe.spec;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.floe.serialization.CborSerializable;
import java.util.regex.Pattern;

/**
 * Where a dataset's table comes from, once its name is resolved: a metadata location (a {@code
 * *.metadata.json} file or a table directory with a version hint), or a table in one of the node's
 * configured catalogs. Every node resolves it the same way, so slices open the same table's files
 * with the same FileIO (and a REST catalog's vended credentials) wherever they load.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
@JsonSubTypes({
  @JsonSubTypes.Type(value = TableSource.AtLocation.class, name = "location"),
  @JsonSubTypes.Type(value = TableSource.InCatalog.class, name = "catalog")
})
public sealed interface TableSource extends CborSerializable {
  /** What a catalog may be called: a dot would be read as part of a table identifier. */
  Pattern CATALOG_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

  /** Whether {@code name} may name a catalog: 1-64 of letters, digits, '_', '-'. */
  static boolean isCatalogName(String name) {
    return name != null && CATALOG_NAME.matcher(name).matches();
  }

  /** How the source reads in messages and status: the location, or {@code catalog.db.table}. */
  String describe();

  /** A table named by its metadata location. */
  record AtLocation(String location) implements TableSource {
    @Override
    public String describe() {
      return location;
    }
  }

  /**
   * A table in a configured catalog.
   *
   * @param catalog the catalog's name in the node's configuration
   * @param identifier the table's identifier in it, {@code namespace.table} (nested namespaces
   *     dotted)
   */
  record InCatalog(String catalog, String identifier) implements TableSource {
    @Override
    public String describe() {
      return catalog + "." + identifier;
    }
  }
}
