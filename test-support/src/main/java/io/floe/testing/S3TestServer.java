package io.floe.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.aws.s3.S3FileIO;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

/**
 * An S3-compatible server (s3proxy, in process) on 127.0.0.1, storing objects in a temporary
 * directory, with one empty bucket ready.
 *
 * <pre>{@code
 * try (S3TestServer s3 = S3TestServer.start()) {
 *   IcebergTestTables tables = IcebergTestTables.inCatalog(s3.catalog("warehouse"), "db");
 *   ...
 * }
 * }</pre>
 */
public final class S3TestServer implements AutoCloseable {
  public static final String ACCESS_KEY = "floe-test-access";
  public static final String SECRET_KEY = "floe-test-secret";
  public static final String REGION = "us-east-1";

  private static final String HOST = "127.0.0.1";

  private final Path dataDir;
  private final BlobStore store;
  private final S3Proxy proxy;
  private final String bucket;

  private S3TestServer(Path dataDir, BlobStore store, S3Proxy proxy, String bucket) {
    this.dataDir = dataDir;
    this.store = store;
    this.proxy = proxy;
    this.bucket = bucket;
  }

  /** Starts a server on a free port with a fresh, uniquely named bucket. */
  public static S3TestServer start() throws Exception {
    return start(0, 0);
  }

  /**
   * Starts a server whose object reads behave more like a remote store's: each GET answers after
   * {@code getLatencyMillis} and streams at most {@code getKilobytesPerSecond} (1,000 bytes) per
   * request, through s3proxy's latency middleware; 0 and 0 for neither.
   */
  public static S3TestServer start(long getLatencyMillis, long getKilobytesPerSecond)
      throws Exception {
    Path dataDir = Files.createTempDirectory("floe-s3-");
    BlobStore store = new FilesystemNio2BlobStore(dataDir.toString());
    BlobStore served = store;
    if (getLatencyMillis > 0 || getKilobytesPerSecond > 0) {
      Map<String, Long> latencies = new java.util.HashMap<>();
      Map<String, Long> speeds = new java.util.HashMap<>();
      if (getLatencyMillis > 0) {
        latencies.put("get", getLatencyMillis);
      }
      if (getKilobytesPerSecond > 0) {
        speeds.put("get", getKilobytesPerSecond);
      }
      // Package-private in s3proxy: its own main builds it from properties.
      java.lang.reflect.Method wrap =
          Class.forName("org.gaul.s3proxy.middleware.LatencyBlobStore")
              .getDeclaredMethod("newLatencyBlobStore", BlobStore.class, Map.class, Map.class);
      wrap.setAccessible(true);
      served = (BlobStore) wrap.invoke(null, store, latencies, speeds);
    }
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(served)
            .endpoint(URI.create("http://" + HOST + ":0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
            .ignoreUnknownHeaders(true)
            .build();
    proxy.start();
    while (!"STARTED".equals(proxy.getState())) {
      Thread.sleep(5);
    }
    String bucket = "floe-test-" + UUID.randomUUID().toString().substring(0, 8);
    store.createContainer(bucket);
    return new S3TestServer(dataDir, store, proxy, bucket);
  }

  public URI endpoint() {
    return URI.create("http://" + HOST + ":" + proxy.getPort());
  }

  public String accessKey() {
    return ACCESS_KEY;
  }

  public String secretKey() {
    return SECRET_KEY;
  }

  public String region() {
    return REGION;
  }

  public String bucket() {
    return bucket;
  }

  /** {@code s3://<bucket>/<path>}, as every writer puts paths into a table's metadata. */
  public String uri(String path) {
    return "s3://" + bucket + "/" + (path.startsWith("/") ? path.substring(1) : path);
  }

  /** Iceberg FileIO properties under which {@code s3://<bucket>/} reaches this server. */
  public Map<String, String> fileIOProperties(String secretKey) {
    return Map.of(
        "s3.endpoint", endpoint().toString(),
        "s3.path-style-access", "true",
        "s3.access-key-id", ACCESS_KEY,
        "s3.secret-access-key", secretKey,
        "client.region", REGION);
  }

  public Map<String, String> fileIOProperties() {
    return fileIOProperties(SECRET_KEY);
  }

  /**
   * A JDBC catalog (in a SQLite file of this server's) writing tables under {@code
   * s3://<bucket>/<warehouse>} through Iceberg's S3FileIO, with {@code s3://} in every path of
   * their metadata, as PyIceberg, Spark or Trino leave them.
   */
  public Catalog catalog(String warehouse) {
    JdbcCatalog catalog = new JdbcCatalog();
    Map<String, String> properties = new java.util.HashMap<>(fileIOProperties());
    properties.put(CatalogProperties.URI, jdbcUri());
    properties.put(CatalogProperties.WAREHOUSE_LOCATION, uri(warehouse));
    properties.put(CatalogProperties.FILE_IO_IMPL, S3FileIO.class.getName());
    catalog.setConf(new org.apache.hadoop.conf.Configuration());
    catalog.initialize("s3-test", properties);
    return catalog;
  }

  /** The SQLite database of {@link #catalog}'s tables. */
  public String jdbcUri() {
    return "jdbc:sqlite:" + dataDir.resolve("catalog.db");
  }

  @Override
  public void close() throws Exception {
    try {
      proxy.stop();
    } finally {
      store.close();
      deleteRecursively(dataDir);
    }
  }

  private static void deleteRecursively(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(S3TestServer::deleteQuietly);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      // A leftover file in a temp directory is not worth failing a test for.
    }
  }
}
