package io.floe.table;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;

/**
 * Which locations a node may read tables from when a caller names them: prefixes such as {@code
 * s3://lake/warehouse/} or {@code file:/data/tables/}, compared after the location is normalized
 * (plain paths made absolute, {@code .} and {@code ..} segments resolved), so no location escapes
 * its prefix. Every file of such a table is checked too, not only the metadata a caller names: a
 * table's metadata cannot point the node at files outside the prefixes. Tables in configured
 * catalogs are the operator's choice and are not confined.
 */
public final class LocationPolicy {
  private static final LocationPolicy ANY = new LocationPolicy(null);

  /** Normalized prefixes; null for any location. */
  private final List<String> prefixes;

  private LocationPolicy(List<String> prefixes) {
    this.prefixes = prefixes;
  }

  /** Any location: for libraries and tests that open tables without a node's settings. */
  public static LocationPolicy any() {
    return ANY;
  }

  /**
   * From a setting: prefixes separated by commas; {@code *} for any location; empty for none (only
   * catalog tables).
   */
  public static LocationPolicy parse(String setting) {
    String trimmed = setting == null ? "" : setting.trim();
    if (trimmed.equals("*")) {
      return ANY;
    }
    List<String> prefixes =
        java.util.Arrays.stream(trimmed.split(","))
            .map(String::trim)
            .filter(p -> !p.isEmpty())
            .map(LocationPolicy::normalize)
            .toList();
    return new LocationPolicy(prefixes);
  }

  public boolean allows(String location) {
    if (prefixes == null) {
      return true;
    }
    String normalized = normalize(location);
    return prefixes.stream().anyMatch(normalized::startsWith);
  }

  /**
   * @throws StorageFailure LOCATION_NOT_ALLOWED naming the location and the allowed prefixes
   */
  public void check(String location) {
    if (!allows(location)) {
      throw new StorageFailure(
          StorageFailure.Reason.LOCATION_NOT_ALLOWED,
          String.format(
              "Location '%s' is outside the locations this node may read (%s); an operator sets"
                  + " them in floe.security.allowed-locations (FLOE_ALLOWED_LOCATIONS)",
              io.floe.util.Excerpt.of(location),
              prefixes.isEmpty() ? "none: only catalog tables" : String.join(", ", prefixes)),
          null);
    }
  }

  @Override
  public String toString() {
    return prefixes == null ? "*" : String.join(",", prefixes);
  }

  /**
   * Plain paths and {@code file:} URIs as absolute normalized {@code file:} paths; URIs resolved.
   */
  static String normalize(String location) {
    String trimmed = location.trim();
    String scheme = FloeFileIO.scheme(trimmed);
    if (scheme == null) {
      return FloeFileIO.fileLocation(trimmed) + suffix(trimmed);
    }
    if (scheme.equalsIgnoreCase("file")) {
      String path = trimmed.substring(5).replaceFirst("^//", "");
      return FloeFileIO.fileLocation(path) + suffix(trimmed);
    }
    try {
      return new URI(trimmed).normalize().toString();
    } catch (URISyntaxException e) {
      // Not a URI Floe could read anyway; compared as given, '..' refused outright.
      return trimmed.contains("..") ? "\u0000" : trimmed;
    }
  }

  /** Path normalization drops a trailing slash; a prefix keeps it, so 'a/' does not allow 'ab'. */
  private static String suffix(String location) {
    return location.endsWith("/") ? "/" : "";
  }
}
