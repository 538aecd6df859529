package io.floe.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
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
 *   IcebergTestTables tables = IcebergTestTables.at(s3.uri("warehouse"), s3.hadoopConfiguration());
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

  /**
   * Starts a server on a free port with a fresh bucket. The bucket name is unique per server
   * because Hadoop caches one S3A file system per bucket for the whole JVM: a second server reusing
   * a name would be reached through the first one's endpoint.
   */
  public static S3TestServer start() throws Exception {
    Path dataDir = Files.createTempDirectory("floe-s3-");
    BlobStore store = new FilesystemNio2BlobStore(dataDir.toString());
    S3Proxy proxy =
        S3Proxy.builder()
            .blobStore(store)
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

  /** {@code s3a://<bucket>/<path>}. */
  public String uri(String path) {
    return "s3a://" + bucket + "/" + (path.startsWith("/") ? path.substring(1) : path);
  }

  /** A fresh Hadoop configuration under which {@code s3a://<bucket>/} reaches this server. */
  public Configuration hadoopConfiguration() {
    Configuration conf = new Configuration();
    conf.set("fs.s3a.endpoint", endpoint().toString());
    conf.set("fs.s3a.endpoint.region", REGION);
    conf.setBoolean("fs.s3a.path.style.access", true);
    conf.setBoolean("fs.s3a.connection.ssl.enabled", false);
    conf.set(
        "fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
    conf.set("fs.s3a.access.key", ACCESS_KEY);
    conf.set("fs.s3a.secret.key", SECRET_KEY);
    // Never look elsewhere for the bucket's region: everything stays on 127.0.0.1.
    conf.setBoolean("fs.s3a.cross.region.access.enabled", false);
    // Hadoop 3.5's defaults already avoid the SDK's flexible checksums; pin them so a newer
    // default cannot send checksum trailers s3proxy does not verify.
    conf.setBoolean("fs.s3a.checksum.generation", false);
    conf.setBoolean("fs.s3a.checksum.validation", false);
    conf.set("fs.s3a.create.checksum.algorithm", "NONE");
    // Skip the existence and parent-directory probes before each create: one request per file
    // instead of several, which halves the time to write a table of many small files.
    conf.setBoolean("fs.s3a.create.performance", true);
    // Buffer uploads in memory rather than in files under hadoop.tmp.dir.
    conf.set("fs.s3a.fast.upload.buffer", "array");
    // A test against a dead server should fail in seconds, not after minutes of back-off.
    conf.setInt("fs.s3a.attempts.maximum", 2);
    conf.setInt("fs.s3a.retry.limit", 2);
    conf.set("fs.s3a.retry.interval", "100ms");
    conf.set("fs.s3a.connection.establish.timeout", "15s"); // S3A's minimum
    conf.set("fs.s3a.connection.timeout", "30s");
    return conf;
  }

  @Override
  public void close() throws Exception {
    try {
      // Evict this bucket's cached S3A file system (and its threads); leave others alone.
      FileSystem.get(URI.create("s3a://" + bucket + "/"), hadoopConfiguration()).close();
    } finally {
      try {
        proxy.stop();
      } finally {
        store.close();
        deleteRecursively(dataDir);
      }
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
