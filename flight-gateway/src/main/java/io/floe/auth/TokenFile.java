package io.floe.auth;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bearer tokens a node accepts, read from a file of lines {@code <role> <name> <token>} ({@code
 * #} starts a comment), such as a Kubernetes Secret mounted as a file. The file is read again when
 * it changes (checked at most every {@link #RECHECK}), so tokens rotate without a restart; a file
 * that cannot be read or parsed keeps the tokens last read, and says why in the log. Only SHA-256
 * digests of the tokens are kept, and they are looked up by digest.
 */
public final class TokenFile {
  /** How often a call may look whether the file changed. */
  public static final Duration RECHECK = Duration.ofSeconds(2);

  private static final Logger LOG = LoggerFactory.getLogger(TokenFile.class);

  private final Path path;
  private final Clock clock;
  private volatile Map<String, Caller> byDigest;
  private volatile FileTime readAt;
  private volatile long checkedAt;

  private TokenFile(Path path, Clock clock, Map<String, Caller> byDigest, FileTime readAt) {
    this.path = path;
    this.clock = clock;
    this.byDigest = byDigest;
    this.readAt = readAt;
    this.checkedAt = clock.millis();
  }

  /**
   * Reads the file once now.
   *
   * @throws IllegalArgumentException naming the file and line when it cannot be used
   */
  public static TokenFile read(Path path, Clock clock) {
    try {
      return new TokenFile(path, clock, parse(path), Files.getLastModifiedTime(path));
    } catch (IOException e) {
      throw new IllegalArgumentException("Cannot read the token file " + path + ": " + e, e);
    }
  }

  /** The caller a presented token stands for, if the file has it. */
  public Optional<Caller> caller(String token) {
    refreshIfChanged();
    return Optional.ofNullable(byDigest.get(digest(token)));
  }

  private void refreshIfChanged() {
    long now = clock.millis();
    if (now - checkedAt < RECHECK.toMillis()) {
      return;
    }
    synchronized (this) {
      if (now - checkedAt < RECHECK.toMillis()) {
        return;
      }
      checkedAt = now;
      try {
        FileTime modified = Files.getLastModifiedTime(path);
        if (!modified.equals(readAt)) {
          byDigest = parse(path);
          readAt = modified;
          LOG.info("Token file {} read again: {} tokens", path, byDigest.size());
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("Token file {} could not be read again; keeping its last tokens: {}", path, e);
      }
    }
  }

  private static Map<String, Caller> parse(Path path) throws IOException {
    List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
    Map<String, Caller> tokens = new HashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] fields = line.split("\\s+");
      if (fields.length != 3) {
        throw new IllegalArgumentException(
            String.format(
                "Token file %s line %d: expected '<role> <name> <token>', got %d fields",
                path, i + 1, fields.length));
      }
      Role role;
      try {
        role = Role.parse(fields[0]);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            String.format("Token file %s line %d: %s", path, i + 1, e.getMessage()), e);
      }
      if (fields[2].length() < 16) {
        throw new IllegalArgumentException(
            String.format(
                "Token file %s line %d: the token of '%s' is shorter than 16 characters",
                path, i + 1, fields[1]));
      }
      tokens.put(digest(fields[2]), new Caller(fields[1], role));
    }
    return Map.copyOf(tokens);
  }

  static String digest(String token) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(sha.digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new UncheckedIOException(new IOException("SHA-256 unavailable", e));
    }
  }
}
