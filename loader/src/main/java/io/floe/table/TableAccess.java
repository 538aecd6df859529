package io.floe.table;

import io.floe.error.ErrorKind;
import io.floe.error.FloeException;
import io.floe.spec.InvalidSpecException;
import io.floe.spec.TableSource;
import io.floe.util.Excerpt;
import io.floe.util.Preconditions;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a node's tables, read-only: tables named by the location of their metadata through one
 * shared {@link FloeFileIO}, and tables in the configured catalogs through those catalogs, each
 * built once with Iceberg's {@link CatalogUtil} from the node's {@link CatalogSettings} (over the
 * storage properties, which catalogs inherit and may override). A table from a catalog is opened
 * again after {@link #TABLE_TTL}, so a REST catalog's vended credentials are renewed. Closing the
 * access closes the catalogs and the shared FileIO.
 */
public final class TableAccess implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TableAccess.class);
  private static final String HINT = "metadata/version-hint.text";

  /**
   * How long a catalog table (and its FileIO's credentials) serves slice loads before reopening.
   */
  public static final Duration TABLE_TTL = Duration.ofMinutes(5);

  private final StorageSettings storage;
  private final CatalogSettings catalogSettings;
  private final Configuration hadoopConf;
  private final FloeFileIO locationIO;
  private final ParallelReads parallelReads;
  private final Map<String, Catalog> catalogs = new ConcurrentHashMap<>();
  private final Map<TableSource.InCatalog, Opened> opened = new ConcurrentHashMap<>();

  private record Opened(Table table, long atNanos) {}

  public TableAccess(
      StorageSettings storage, CatalogSettings catalogSettings, LocationPolicy locations) {
    this.storage = storage;
    this.catalogSettings = catalogSettings;
    this.hadoopConf = storage.hadoopConfiguration();
    this.locationIO = new FloeFileIO();
    locationIO.setConf(hadoopConf);
    locationIO.initialize(storage.properties());
    locationIO.confine(locations);
    this.parallelReads = ParallelReads.of(storage.parallelRequests(), storage.rangeSize());
  }

  /** Tables at any location (libraries and tests; a node passes its operator's policy). */
  public TableAccess(StorageSettings storage, CatalogSettings catalogSettings) {
    this(storage, catalogSettings, LocationPolicy.any());
  }

  public TableAccess(StorageSettings storage) {
    this(storage, CatalogSettings.none());
  }

  public Set<String> catalogNames() {
    return catalogSettings.names();
  }

  /**
   * Where the table named {@code table} comes from. With {@code catalog}, {@code table} is an
   * identifier in it ({@code db.clicks}); without, {@code lake.db.clicks} names a table in catalog
   * {@code lake} when one is configured under that name, and anything else is a location.
   *
   * @throws InvalidSpecException for an empty table name
   * @throws StorageFailure INVALID_ARGUMENT for {@code x.db.table} whose catalog {@code x} is not
   *     configured (and no local path of that name exists), naming the configured ones
   */
  public TableSource resolve(String table, String catalog) {
    if (table == null || table.isBlank()) {
      throw new InvalidSpecException("Invalid table: '" + Excerpt.of(table) + "' (empty)");
    }
    String name = table.trim();
    if (catalog != null) {
      requireCatalog(catalog, name);
      return new TableSource.InCatalog(catalog, name);
    }
    if (looksLikeIdentifier(name)) {
      int dot = name.indexOf('.');
      String first = name.substring(0, dot);
      if (catalogSettings.names().contains(first)) {
        return new TableSource.InCatalog(first, name.substring(dot + 1));
      }
      // catalog.db.table with a catalog this node does not have (a typo, most likely), unless a
      // local path of that name exists: refused naming the configured catalogs rather than
      // taken for a path in the node's working directory.
      if (name.indexOf('.', dot + 1) > 0 && !existsLocally(name)) {
        requireCatalog(first, name);
      }
    }
    return new TableSource.AtLocation(name);
  }

  private static boolean existsLocally(String name) {
    try {
      return java.nio.file.Files.exists(java.nio.file.Path.of(name));
    } catch (java.nio.file.InvalidPathException e) {
      return false;
    }
  }

  /** {@code a.b.c}: dotted words without a slash, scheme or file suffix. */
  private static boolean looksLikeIdentifier(String name) {
    return name.indexOf('.') > 0
        && name.indexOf('/') < 0
        && name.indexOf(':') < 0
        && !name.endsWith(".json");
  }

  /**
   * The table as its catalog or metadata has it now.
   *
   * @throws StorageFailure when it is missing, refused or unreadable, naming it
   */
  public Table open(TableSource source) {
    if (source instanceof TableSource.InCatalog inCatalog) {
      Table table = loadFromCatalog(inCatalog);
      opened.put(inCatalog, new Opened(table, System.nanoTime()));
      return table;
    }
    return openLocation(((TableSource.AtLocation) source).location());
  }

  /**
   * The FileIO that reads the table's data and delete files: a catalog table's own, renewed after
   * the TTL, with object-store files read in parallel ranges ({@link ParallelReads}).
   */
  public FileIO io(TableSource source) {
    if (source instanceof TableSource.InCatalog inCatalog) {
      Opened known = opened.get(inCatalog);
      if (known == null || System.nanoTime() - known.atNanos() > TABLE_TTL.toNanos()) {
        return parallelReads.wrap(open(inCatalog).io());
      }
      return parallelReads.wrap(known.table().io());
    }
    return parallelReads.wrap(locationIO);
  }

  /** The FileIO for tables named by location. */
  public FileIO locationIO() {
    return locationIO;
  }

  private Table loadFromCatalog(TableSource.InCatalog source) {
    Catalog catalog = catalog(source.catalog(), source.identifier());
    TableIdentifier identifier;
    try {
      identifier = TableIdentifier.parse(source.identifier());
    } catch (IllegalArgumentException e) {
      throw new InvalidSpecException(
          "Invalid table identifier '"
              + Excerpt.of(source.identifier())
              + "' in catalog '"
              + source.catalog()
              + "': expected namespace.table",
          e);
    }
    try {
      return catalog.loadTable(identifier);
    } catch (RuntimeException e) {
      throw StorageFailures.translate(
          e, "table '" + Excerpt.of(identifier) + "' in catalog '" + source.catalog() + "'");
    }
  }

  private Catalog catalog(String name, String forTable) {
    requireCatalog(name, forTable);
    Catalog known = catalogs.get(name);
    if (known != null) {
      return known;
    }
    synchronized (catalogs) {
      known = catalogs.get(name);
      if (known == null) {
        known = build(name);
        catalogs.put(name, known);
      }
      return known;
    }
  }

  private Catalog build(String name) {
    Map<String, String> properties = new HashMap<>(storage.properties());
    properties.putAll(catalogSettings.properties(name).orElseThrow());
    // JDBC, Hadoop and Nessie catalogs default to HadoopFileIO, which reads none of s3://, gs://
    // or abfs://; and every scheme must pass FloeFileIO's check.
    properties.putIfAbsent(CatalogProperties.FILE_IO_IMPL, FloeFileIO.class.getName());
    try {
      Catalog catalog = CatalogUtil.buildIcebergCatalog(name, properties, hadoopConf);
      LOG.info(
          "Catalog '{}' opened: {}",
          name,
          Secrets.redacted(catalogSettings.properties(name).orElseThrow()));
      return catalog;
    } catch (RuntimeException e) {
      RuntimeException translated = StorageFailures.translate(e, "catalog '" + name + "'");
      if (translated instanceof FloeException) {
        throw translated;
      }
      throw new IllegalArgumentException(
          "Catalog '" + name + "' could not be opened: " + StorageFailures.rootMessage(e), e);
    }
  }

  private void requireCatalog(String name, String forTable) {
    if (!catalogSettings.names().contains(name)) {
      throw new StorageFailure(
          ErrorKind.INVALID_ARGUMENT,
          String.format(
              "No catalog '%s' for table '%s'; configured catalogs: %s (floe.catalogs or"
                  + " FLOE_CATALOG__<NAME>__TYPE)",
              Excerpt.of(name),
              Excerpt.of(forTable),
              catalogSettings.names().isEmpty()
                  ? "none"
                  : String.join(", ", catalogSettings.names())),
          null);
    }
  }

  private Table openLocation(String location) {
    String normalized = normalize(location);
    FloeFileIO.checkScheme(normalized);
    String metadata =
        normalized.endsWith(".metadata.json") ? normalized : currentMetadataOf(normalized);
    try {
      if (!locationIO.newInputFile(metadata).exists()) {
        throw new StorageFailure(
            ErrorKind.NOT_FOUND,
            "No Iceberg table metadata at '" + Excerpt.location(metadata) + "'",
            null);
      }
      // Read and parsed now, so a failure is reported here and says what is wrong with the file.
      TableMetadata current = TableMetadataFile.read(locationIO, metadata);
      return new BaseTable(new StaticTableOperations(current, locationIO), metadata);
    } catch (RuntimeException e) {
      throw StorageFailures.translateReading(
          e, "table metadata '" + Excerpt.location(metadata) + "'");
    }
  }

  private String currentMetadataOf(String tableDir) {
    String dir = tableDir.endsWith("/") ? tableDir.substring(0, tableDir.length() - 1) : tableDir;
    String hintLocation = dir + "/" + HINT;
    try {
      InputFile hint = locationIO.newInputFile(hintLocation);
      if (!hint.exists()) {
        throw new StorageFailure(
            ErrorKind.NOT_FOUND,
            String.format(
                "No Iceberg table at '%s': expected a *.metadata.json location or a table"
                    + " directory with %s (tables in a catalog have no version hint: name them"
                    + " catalog.namespace.table; configured catalogs: %s)",
                Excerpt.location(tableDir),
                HINT,
                catalogSettings.names().isEmpty()
                    ? "none"
                    : String.join(", ", catalogSettings.names())),
            null);
      }
      try (InputStream in = hint.newStream()) {
        String version = new String(in.readNBytes(64), StandardCharsets.UTF_8).trim();
        Preconditions.checkArgument(
            version.matches("\\d{1,18}"),
            "Invalid version hint in '%s': not a version number",
            Excerpt.location(hintLocation));
        return dir + "/metadata/v" + version + ".metadata.json";
      }
    } catch (IOException | RuntimeException e) {
      throw StorageFailures.translateReading(
          e, "version hint '" + Excerpt.location(hintLocation) + "'");
    }
  }

  /** Plain paths become {@code file:} URIs so Hadoop does not resolve them against fs.defaultFS. */
  private static String normalize(String location) {
    String trimmed = location.trim();
    if (FloeFileIO.scheme(trimmed) != null) {
      return trimmed;
    }
    return FloeFileIO.fileLocation(trimmed);
  }

  @Override
  public void close() {
    for (Map.Entry<String, Catalog> entry : catalogs.entrySet()) {
      if (entry.getValue() instanceof Closeable closeable) {
        try {
          closeable.close();
        } catch (IOException | RuntimeException e) {
          LOG.warn("Catalog '{}' did not close cleanly: {}", entry.getKey(), e.toString());
        }
      }
    }
    catalogs.clear();
    opened.clear();
    locationIO.close();
    parallelReads.close();
  }
}
