package io.floe.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.TimeUnit;

/**
 * A bearer token kept in a file that is renewed in place (a Kubernetes pod's projected
 * ServiceAccount token, which the kubelet rewrites before it expires): read again when its
 * modification time or size changes, looked at on every call (one {@code stat}). The same rules as
 * the Python client's {@code _TokenFile}: the file holds the token alone, surrounding whitespace
 * stripped; a file that is missing, empty or holds whitespace inside the token fails when the
 * client is built, and later on the call that finds it so (the last token is not reused).
 */
final class TokenFile {
  private final Path path;
  private Object seen;
  private String header;

  /**
   * @throws IllegalArgumentException if the file cannot be read or holds no usable token
   */
  TokenFile(Path path) {
    this.path = path;
    try {
      header();
    } catch (UncheckedIOException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /**
   * The {@code Authorization} header's value from the file as it is now.
   *
   * @throws UncheckedIOException if the file cannot be read
   * @throws IllegalArgumentException if it holds no usable token
   */
  synchronized String header() {
    try {
      BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
      // Modification time and size together, as Python's (st_mtime_ns, st_size).
      Object now =
          java.util.List.of(
              attributes.lastModifiedTime().to(TimeUnit.NANOSECONDS), attributes.size());
      if (!now.equals(seen)) {
        String token = Files.readString(path, StandardCharsets.US_ASCII).strip();
        header = BearerToken.header(token, "in token file " + path);
        seen = now;
      }
      return header;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read token file " + path + ": " + e, e);
    }
  }

  Path path() {
    return path;
  }
}
