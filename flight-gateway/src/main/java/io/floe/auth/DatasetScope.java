package io.floe.auth;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The datasets a caller may plan, read, load, register jobs on and see in {@code list}: every
 * dataset, or those named by exact name or by a name prefix ({@code team-a.*}). A token file line's
 * {@code datasets=} option, comma-separated; no option, every dataset.
 */
public final class DatasetScope {
  private static final DatasetScope ALL = new DatasetScope(List.of());

  /** A dataset name, or a prefix of one followed by '*'. */
  private static final Pattern ENTRY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}\\*?");

  /** Exact names and prefixes (ending in '*'); empty for every dataset. */
  private final List<String> entries;

  private DatasetScope(List<String> entries) {
    this.entries = List.copyOf(entries);
  }

  /** No restriction. */
  public static DatasetScope all() {
    return ALL;
  }

  /**
   * From a comma-separated list of names and prefixes ({@code events,team-a.*}); empty or blank for
   * every dataset.
   *
   * @throws IllegalArgumentException naming an entry that is neither
   */
  public static DatasetScope parse(String list) {
    if (list == null || list.isBlank()) {
      return ALL;
    }
    List<String> entries = new ArrayList<>();
    for (String entry : list.split(",")) {
      String trimmed = entry.strip();
      if (!ENTRY.matcher(trimmed).matches()) {
        throw new IllegalArgumentException(
            "Invalid dataset scope entry '"
                + io.floe.util.Excerpt.of(trimmed)
                + "': expected a dataset name, or a name prefix followed by '*'");
      }
      entries.add(trimmed);
    }
    return new DatasetScope(entries);
  }

  public boolean isAll() {
    return entries.isEmpty();
  }

  /** Whether a caller of this scope may reach dataset {@code name}. */
  public boolean allows(String name) {
    if (entries.isEmpty()) {
      return true;
    }
    for (String entry : entries) {
      boolean allowed =
          entry.endsWith("*")
              ? name.startsWith(entry.substring(0, entry.length() - 1))
              : name.equals(entry);
      if (allowed) {
        return true;
      }
    }
    return false;
  }

  /** As the token file writes it, and refusals quote it: {@code a,b.*}; empty for every dataset. */
  @Override
  public String toString() {
    return String.join(",", entries);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof DatasetScope scope && scope.entries.equals(entries);
  }

  @Override
  public int hashCode() {
    return entries.hashCode();
  }
}
