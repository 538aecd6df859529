package io.floe.auth;

import io.floe.tenant.Owner;
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
 * The bearer tokens a node accepts, read from a file of lines {@code <role> <name> <token>
 * [tenant=<tenant>] [datasets=<names and prefixes>]} ({@code #} starts a comment), such as a
 * Kubernetes Secret mounted as a file. The file is read again when it changes (checked at most
 * every {@link #RECHECK}), so tokens rotate without a restart; a file that cannot be read or parsed
 * keeps the tokens last read, and says why in the log. Only SHA-256 digests of the tokens are kept,
 * and they are looked up by digest.
 *
 * <p>A line without {@code tenant=} is in the {@link Owner#DEFAULT_TENANT} (every line of a file
 * written before tenants, so those deployments keep working unchanged); without {@code datasets=}
 * it reaches every dataset. A line whose third field is a Kubernetes ServiceAccount's user name,
 * {@code system:serviceaccount:<namespace>:<name>}, instead of a token gives that ServiceAccount
 * its role when it authenticates with its own token (reviewed by the API server, see {@link
 * TokenReviewer}); its tenant defaults to the ServiceAccount's namespace.
 */
public final class TokenFile {
  /** How often a call may look whether the file changed. */
  public static final Duration RECHECK = Duration.ofSeconds(2);

  private static final Logger LOG = LoggerFactory.getLogger(TokenFile.class);

  private final Path path;
  private final Clock clock;
  private volatile Entries entries;
  private volatile FileTime readAt;
  private volatile long checkedAt;

  /** A file's callers: by their token's digest, and by ServiceAccount user name. */
  private record Entries(Map<String, Caller> byDigest, Map<String, Caller> byServiceAccount) {}

  /** The user name prefix of Kubernetes ServiceAccounts, as TokenReview answers it. */
  public static final String SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";

  private TokenFile(Path path, Clock clock, Entries entries, FileTime readAt) {
    this.path = path;
    this.clock = clock;
    this.entries = entries;
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
    return Optional.ofNullable(entries.byDigest().get(digest(token)));
  }

  /**
   * The caller a Kubernetes ServiceAccount is, by its user name ({@code
   * system:serviceaccount:<namespace>:<name>}), if a line names it.
   */
  public Optional<Caller> serviceAccount(String userName) {
    refreshIfChanged();
    return Optional.ofNullable(entries.byServiceAccount().get(userName));
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
          entries = parse(path);
          readAt = modified;
          LOG.info(
              "Token file {} read again: {} tokens, {} ServiceAccounts",
              path,
              entries.byDigest().size(),
              entries.byServiceAccount().size());
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("Token file {} could not be read again; keeping its last tokens: {}", path, e);
      }
    }
  }

  private static Entries parse(Path path) throws IOException {
    List<String> lines = Files.readAllLines(path, StandardCharsets.UTF_8);
    Map<String, Caller> tokens = new HashMap<>();
    Map<String, Caller> serviceAccounts = new HashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      try {
        String[] fields = line.split("\\s+");
        if (fields.length < 3) {
          throw new IllegalArgumentException(
              String.format(
                  "expected '<role> <name> <token> [tenant=<tenant>] [datasets=<list>]', got %d"
                      + " fields",
                  fields.length));
        }
        Role role = Role.parse(fields[0]);
        String name = fields[1];
        String secret = fields[2];
        boolean serviceAccount = secret.startsWith(SERVICE_ACCOUNT_PREFIX);
        String tenant = serviceAccount ? namespaceOf(secret) : Owner.DEFAULT_TENANT;
        DatasetScope scope = DatasetScope.all();
        for (int f = 3; f < fields.length; f++) {
          String option = fields[f];
          if (option.startsWith("tenant=")) {
            tenant = Owner.checkTenant(option.substring("tenant=".length()));
          } else if (option.startsWith("datasets=")) {
            scope = DatasetScope.parse(option.substring("datasets=".length()));
            if (scope.isAll()) {
              throw new IllegalArgumentException("'datasets=' names no dataset");
            }
          } else {
            throw new IllegalArgumentException(
                "unknown option '"
                    + io.floe.util.Excerpt.of(option.split("=", 2)[0])
                    + "' (known: tenant=, datasets=)");
          }
        }
        Caller caller = new Caller(name, role, tenant, scope);
        if (serviceAccount) {
          serviceAccounts.put(secret, caller);
        } else if (secret.length() < 16) {
          // Says whose token, never the token itself.
          throw new IllegalArgumentException(
              "the token of '" + name + "' is shorter than 16 characters");
        } else {
          tokens.put(digest(secret), caller);
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            String.format("Token file %s line %d: %s", path, i + 1, e.getMessage()), e);
      }
    }
    return new Entries(Map.copyOf(tokens), Map.copyOf(serviceAccounts));
  }

  /** The namespace of a ServiceAccount user name, {@code system:serviceaccount:<ns>:<name>}. */
  private static String namespaceOf(String userName) {
    String[] parts = userName.substring(SERVICE_ACCOUNT_PREFIX.length()).split(":", -1);
    if (parts.length != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
      throw new IllegalArgumentException(
          "'"
              + io.floe.util.Excerpt.of(userName)
              + "' is not a ServiceAccount user name (system:serviceaccount:<namespace>:<name>)");
    }
    return Owner.checkTenant(parts[0]);
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
