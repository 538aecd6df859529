package io.floe.table;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * A location as {@link LocationPolicy} compares it, in two forms: {@link #normalized} is what the
 * location names (plain paths and {@code file:} URIs as absolute {@code file:} paths with {@code .}
 * and {@code ..} resolved, as Hadoop resolves them before opening; object-store URIs normalized,
 * with one scheme per store), {@link #real} is where it really is (the same, with every symbolic
 * link of a local path resolved). A trailing slash is kept, so a prefix {@code a/} does not match
 * {@code ab}.
 *
 * <p>A link can still be changed between the check and the read; confinement assumes the files
 * under an allowed prefix are not rewritten as links while a table loads.
 */
final class RealLocation {
  /** What a location that names no one object becomes: no prefix starts it. */
  private static final String NOWHERE = "\u0000";

  private RealLocation() {}

  /** The location as it names itself. */
  static String normalized(String location) {
    String trimmed = location.trim();
    String scheme = FloeFileIO.scheme(trimmed);
    if (scheme == null || scheme.equalsIgnoreCase("file")) {
      return localPath(trimmed).map(path -> asLocation(path, trimmed)).orElse(trimmed);
    }
    return objectStore(trimmed, scheme);
  }

  /**
   * Where the location really is; empty for a local path that cannot be resolved: a symbolic link
   * that leads nowhere, a directory the node may not search, a {@code file:} URI naming a host.
   */
  static Optional<String> real(String location) {
    String trimmed = location.trim();
    String scheme = FloeFileIO.scheme(trimmed);
    if (scheme == null || scheme.equalsIgnoreCase("file")) {
      return localPath(trimmed).flatMap(RealLocation::realPath).map(p -> asLocation(p, trimmed));
    }
    return Optional.of(objectStore(trimmed, scheme));
  }

  /** The absolute, normalized path a plain path or {@code file:} URI names. */
  private static Optional<Path> localPath(String location) {
    String path = location;
    if (FloeFileIO.scheme(location) != null) {
      path = location.substring("file:".length());
      if (path.startsWith("//")) {
        int slash = path.indexOf('/', 2);
        if (slash != 2) {
          return Optional.empty(); // file://host/...: not a path on this node
        }
        path = path.substring(slash);
      }
    }
    try {
      return Optional.of(Path.of(path).toAbsolutePath().normalize());
    } catch (InvalidPathException e) {
      return Optional.empty();
    }
  }

  /**
   * {@code path} with its links resolved; a path that does not exist yet by its nearest existing
   * parent (the rest cannot be a link). A link that leads nowhere cannot be resolved: empty.
   */
  private static Optional<Path> realPath(Path path) {
    Path existing = path;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(existing.toRealPath().resolve(existing.relativize(path)));
    } catch (IOException | SecurityException e) {
      return Optional.empty();
    }
  }

  private static String asLocation(Path path, String asGiven) {
    String location = "file:" + path;
    return asGiven.endsWith("/") && !location.endsWith("/") ? location + "/" : location;
  }

  /**
   * A URI with the scheme of its store; one with a {@code .} or {@code ..} segment names no object
   * ({@link #NOWHERE}). An object store takes a key as written ({@code a/../b} is a key of its own,
   * under {@code a/}, and S3FileIO asks for it so), while Hadoop's S3A resolves the dots first: the
   * object read would depend on the client, so no prefix can be said to hold it.
   */
  private static String objectStore(String location, String scheme) {
    String rest = location.substring(scheme.length());
    String canonical = store(scheme) + rest;
    try {
      URI uri = new URI(canonical);
      return uri.normalize().equals(uri) ? uri.toString() : NOWHERE;
    } catch (URISyntaxException e) {
      // Not a URI Floe could read anyway; compared as given, '..' refused outright.
      return canonical.contains("..") ? NOWHERE : canonical;
    }
  }

  /** {@code s3a} and {@code s3n} are Hadoop's names for S3, which Floe reads with one client. */
  private static String store(String scheme) {
    String lower = scheme.toLowerCase(Locale.ROOT);
    return switch (lower) {
      case "s3a", "s3n" -> "s3";
      default -> lower;
    };
  }
}
