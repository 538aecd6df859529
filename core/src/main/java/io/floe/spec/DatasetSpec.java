package io.floe.spec;

import io.floe.serialization.CborSerializable;
import io.floe.util.Excerpt;
import io.floe.util.Preconditions;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What a reader asked to load: which table, at which snapshot, which columns and rows, cut into
 * batches of how many rows. Two loads of one name must agree on all of it.
 *
 * @param name the dataset id readers use; letters, digits, '.', '_' and '-'
 * @param table a {@code *.metadata.json} location, a table directory with a version hint, or a
 *     table identifier: {@code namespace.table} in {@code catalog}, or {@code
 *     catalog.namespace.table}
 * @param catalog the configured catalog {@code table} is in, or null
 * @param snapshotId the snapshot to pin, or null for {@code asOfMillis} or the current one
 * @param asOfMillis pins the snapshot current at this time (epoch millis), or null
 * @param columns the columns to serve in this order (nested as {@code a.b}); empty means all
 * @param filter a row filter in Floe's filter syntax (docs/filter-syntax.md); empty means all rows
 * @param batchRows the most rows one served record batch holds
 * @param replicas how many nodes hold each slice (1..{@link #REPLICAS_MAX}): with 2, every slice
 *     has a copy on a second node that readers switch to at once when the first one fails
 */
public record DatasetSpec(
    String name,
    String table,
    String catalog,
    Long snapshotId,
    Long asOfMillis,
    List<String> columns,
    String filter,
    int batchRows,
    int replicas)
    implements CborSerializable {
  public static final int BATCH_ROWS_DEFAULT = 32_768;
  public static final int BATCH_ROWS_MAX = 1 << 20;

  /** Copies of a slice at most: each costs the slice's memory again. */
  public static final int REPLICAS_MAX = 3;

  /**
   * Characters of a row filter at most, in either form: it travels to every slice and in the
   * dataset's replicated record, so it must stay small beside the cluster's message sizes.
   */
  public static final int FILTER_CHARS_MAX = 1 << 16;

  /** Characters of a table location or identifier at most (object store keys stop at 1,024). */
  public static final int TABLE_CHARS_MAX = 4_096;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  /**
   * Checks a dataset name as every request that names one must: 1-128 of letters, digits, '.', '_',
   * '-', starting with a letter or digit.
   *
   * @throws IllegalArgumentException quoting (a prefix of) the name
   */
  public static String checkName(String name) {
    Preconditions.checkArgument(
        name != null && NAME.matcher(name).matches(),
        "Invalid dataset name: '%s' (1-128 of letters, digits, '.', '_', '-', starting with a"
            + " letter or digit)",
        Excerpt.of(name));
    return name;
  }

  @com.fasterxml.jackson.annotation.JsonCreator
  public DatasetSpec {
    checkName(name);
    Preconditions.checkArgument(
        table != null && !table.isBlank(), "Invalid table location for dataset '%s': empty", name);
    Preconditions.checkArgument(
        table.length() <= TABLE_CHARS_MAX,
        "Invalid table for dataset '%s': %s characters, more than the %s a table may have: '%s'",
        name,
        table.length(),
        TABLE_CHARS_MAX,
        Excerpt.of(table));
    Preconditions.checkArgument(
        catalog == null || TableSource.isCatalogName(catalog),
        "Invalid catalog for dataset '%s': '%s' (1-64 of letters, digits, '_', '-'; leave it out"
            + " for a table location)",
        name,
        Excerpt.of(catalog));
    Preconditions.checkArgument(
        snapshotId == null || asOfMillis == null,
        "Dataset '%s' names both snapshot_id %s and as_of %s; give one",
        name,
        snapshotId,
        asOfMillis);
    Preconditions.checkArgument(
        batchRows > 0 && batchRows <= BATCH_ROWS_MAX,
        "Invalid batch_rows: %s (must be in 1..%s)",
        batchRows,
        BATCH_ROWS_MAX);
    // A record written before replicas existed reads 0: one copy, as it was loaded.
    replicas = replicas == 0 ? 1 : replicas;
    Preconditions.checkArgument(
        replicas >= 1 && replicas <= REPLICAS_MAX,
        "Invalid replicas: %s (must be in 1..%s)",
        replicas,
        REPLICAS_MAX);
    columns = columns == null ? List.of() : List.copyOf(columns);
    filter = filter == null ? "" : filter.trim();
    Preconditions.checkArgument(
        filter.length() <= FILTER_CHARS_MAX,
        "Invalid filter for dataset '%s': %s characters, more than the %s a filter may have",
        name,
        filter.length(),
        FILTER_CHARS_MAX);
  }

  /** A spec of one copy per slice. */
  public DatasetSpec(
      String name,
      String table,
      String catalog,
      Long snapshotId,
      Long asOfMillis,
      List<String> columns,
      String filter,
      int batchRows) {
    this(name, table, catalog, snapshotId, asOfMillis, columns, filter, batchRows, 1);
  }

  public static DatasetSpec of(String name, String table) {
    return new DatasetSpec(name, table, null, null, null, List.of(), "", BATCH_ROWS_DEFAULT);
  }

  /** The table {@code identifier} ({@code namespace.table}) in catalog {@code catalog}. */
  public static DatasetSpec inCatalog(String name, String catalog, String identifier) {
    return new DatasetSpec(
        name, identifier, catalog, null, null, List.of(), "", BATCH_ROWS_DEFAULT);
  }

  public DatasetSpec withColumns(List<String> newColumns) {
    return new DatasetSpec(
        name, table, catalog, snapshotId, asOfMillis, newColumns, filter, batchRows, replicas);
  }

  public DatasetSpec withFilter(String newFilter) {
    return new DatasetSpec(
        name, table, catalog, snapshotId, asOfMillis, columns, newFilter, batchRows, replicas);
  }

  public DatasetSpec withSnapshotId(Long id) {
    return new DatasetSpec(name, table, catalog, id, null, columns, filter, batchRows, replicas);
  }

  public DatasetSpec asOf(Long millis) {
    return new DatasetSpec(
        name, table, catalog, null, millis, columns, filter, batchRows, replicas);
  }

  public DatasetSpec withBatchRows(int rows) {
    return new DatasetSpec(
        name, table, catalog, snapshotId, asOfMillis, columns, filter, rows, replicas);
  }

  public DatasetSpec withReplicas(int copies) {
    return new DatasetSpec(
        name, table, catalog, snapshotId, asOfMillis, columns, filter, batchRows, copies);
  }
}
