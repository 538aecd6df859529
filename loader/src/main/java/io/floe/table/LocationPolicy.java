package io.floe.table;

import io.floe.error.ErrorKind;
import io.floe.util.Excerpt;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Which locations a node may read tables from when a caller names them: prefixes such as {@code
 * s3://lake/warehouse/} or {@code file:/data/tables/}. A location is judged by where it really is
 * ({@link RealLocation}): plain paths made absolute, {@code .} and {@code ..} resolved, symbolic
 * links of local paths followed to their targets (and the prefixes' own links too), and {@code
 * s3a://} and {@code s3n://} taken as {@code s3://}. So neither a caller's {@code ../} nor a link
 * placed inside an allowed directory reaches outside. Every file of such a table is checked ({@link
 * FloeFileIO} asks before opening each), not only the metadata a caller names: a table's metadata
 * cannot point the node at files outside the prefixes. Tables in configured catalogs are the
 * operator's choice and are not confined.
 */
public final class LocationPolicy {
  private static final LocationPolicy ANY = new LocationPolicy(null);

  /** The prefixes as configured, normalized but with links unresolved; null for any location. */
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
        Arrays.stream(trimmed.split(","))
            .map(String::trim)
            .filter(p -> !p.isEmpty())
            .map(RealLocation::normalized)
            .toList();
    return new LocationPolicy(prefixes);
  }

  public boolean allows(String location) {
    return verdict(location) == Verdict.INSIDE;
  }

  /**
   * @throws StorageFailure LOCATION_NOT_ALLOWED naming the location as asked for (never where a
   *     link leads) and the allowed prefixes
   */
  public void check(String location) {
    String why =
        switch (verdict(location)) {
          case INSIDE -> null;
          case OUTSIDE -> "is outside the locations this node may read";
          case LINKED_OUTSIDE ->
              "leads through a symbolic link outside the locations this node may read";
          case UNRESOLVED ->
              "cannot be resolved (a symbolic link that leads nowhere, or a directory the node"
                  + " cannot search), so it is not within the locations this node may read";
        };
    if (why != null) {
      throw new StorageFailure(
          ErrorKind.LOCATION_NOT_ALLOWED,
          String.format(
              "Location '%s' %s (%s); an operator sets them in floe.security.allowed-locations"
                  + " (FLOE_ALLOWED_LOCATIONS)",
              Excerpt.location(location),
              why,
              prefixes.isEmpty() ? "none: only catalog tables" : String.join(", ", prefixes)),
          null);
    }
  }

  private enum Verdict {
    INSIDE,
    /** Outside by its name. */
    OUTSIDE,
    /** Inside by its name, outside where it really is. */
    LINKED_OUTSIDE,
    /** Inside by its name, and where it really is cannot be known. */
    UNRESOLVED
  }

  private Verdict verdict(String location) {
    if (prefixes == null) {
      return Verdict.INSIDE;
    }
    // The prefixes are resolved at every check: a directory mounted or linked after the node
    // started is judged by what it is now.
    Optional<String> real = RealLocation.real(location);
    if (real.isPresent()
        && prefixes.stream()
            .map(RealLocation::real)
            .flatMap(Optional::stream)
            .anyMatch(real.get()::startsWith)) {
      return Verdict.INSIDE;
    }
    String named = RealLocation.normalized(location);
    if (prefixes.stream().noneMatch(named::startsWith)) {
      return Verdict.OUTSIDE;
    }
    return real.isPresent() ? Verdict.LINKED_OUTSIDE : Verdict.UNRESOLVED;
  }

  @Override
  public String toString() {
    return prefixes == null ? "*" : String.join(",", prefixes);
  }
}
