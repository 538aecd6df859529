package io.floe.iceberg;

import io.floe.table.StorageSettings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.aws.s3.S3FileIO;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.jdbc.JdbcCatalog;

/**
 * A copy of a local table on an S3 server on 127.0.0.1 for {@link LoadBenchmark}'s {@code --store
 * s3}: s3proxy runs in a JVM of its own ({@code io.floe.testing.S3ServerMain}, so its CPU is not
 * counted as the loader's), the table's data files are uploaded unchanged, and a table with the
 * same schema, partition spec and data files (their metrics and split offsets kept) is committed
 * with {@code s3://} paths through a JDBC catalog in a temporary SQLite file. Closing stops the
 * server, which deletes the objects.
 */
final class S3Copy implements AutoCloseable {
  private final Process server;
  private final String endpoint;
  private final String bucket;
  private final String accessKey;
  private final String secretKey;
  private final String metadataLocation;
  private final long bytes;
  private final Path catalogDir;

  private S3Copy(
      Process server,
      String endpoint,
      String bucket,
      String accessKey,
      String secretKey,
      String metadataLocation,
      long bytes,
      Path catalogDir) {
    this.server = server;
    this.endpoint = endpoint;
    this.bucket = bucket;
    this.accessKey = accessKey;
    this.secretKey = secretKey;
    this.metadataLocation = metadataLocation;
    this.bytes = bytes;
    this.catalogDir = catalogDir;
  }

  /**
   * @param getLatencyMillis each GET's added latency on the server, 0 for none
   * @param getMegabytesPerSecond each GET's most bytes per second on the server (a remote store's
   *     per-connection bandwidth), 0 for no limit
   */
  static S3Copy of(Table local, long getLatencyMillis, long getMegabytesPerSecond)
      throws Exception {
    Path root = LoadBenchmark.checkout();
    Path classpath = root.resolve("test-support/target/runtime-classpath.txt");
    if (!Files.exists(classpath)) {
      throw new IllegalStateException(classpath + " is missing: run mvn package first");
    }
    String cp =
        root.resolve("test-support/target/classes")
            + java.io.File.pathSeparator
            + Files.readString(classpath).trim();
    Process server =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g",
                "-cp",
                cp,
                "io.floe.testing.S3ServerMain",
                String.valueOf(getLatencyMillis),
                String.valueOf(getMegabytesPerSecond * 1000))
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    Runtime.getRuntime().addShutdownHook(new Thread(server::destroy));
    try {
      String line =
          new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))
              .readLine();
      if (line == null) {
        throw new IllegalStateException("The S3 server exited before it served");
      }
      String[] words = line.trim().split(" ");
      String endpoint = words[0];
      String bucket = words[1];
      Map<String, String> properties = new HashMap<>();
      properties.put("s3.endpoint", endpoint);
      properties.put("s3.path-style-access", "true");
      properties.put("s3.access-key-id", words[2]);
      properties.put("s3.secret-access-key", words[3]);
      properties.put("client.region", "us-east-1");

      Path catalogDir = Files.createTempDirectory("floe-bench-s3-catalog-");
      Map<String, String> catalogProperties = new HashMap<>(properties);
      catalogProperties.put(
          CatalogProperties.URI, "jdbc:sqlite:" + catalogDir.resolve("catalog.db"));
      catalogProperties.put(CatalogProperties.WAREHOUSE_LOCATION, "s3://" + bucket + "/warehouse");
      catalogProperties.put(CatalogProperties.FILE_IO_IMPL, S3FileIO.class.getName());
      long bytes = 0;
      try (JdbcCatalog catalog = new JdbcCatalog()) {
        catalog.setConf(new org.apache.hadoop.conf.Configuration());
        catalog.initialize("bench-s3", catalogProperties);
        catalog.createNamespace(Namespace.of("bench"));
        Table table =
            catalog.createTable(
                TableIdentifier.of("bench", "table"),
                local.schema(),
                local.spec(),
                local.properties());
        List<DataFile> files = new ArrayList<>();
        try (CloseableIterable<FileScanTask> tasks = local.newScan().planFiles()) {
          for (FileScanTask task : tasks) {
            if (!files.stream().anyMatch(f -> f.location().equals(task.file().location()))) {
              files.add(task.file());
            }
          }
        }
        AppendFiles append = table.newAppend();
        for (DataFile file : files) {
          String name = file.location().substring(file.location().lastIndexOf('/') + 1);
          String target = "s3://" + bucket + "/warehouse/bench/table/data/" + name;
          try (InputStream in = local.io().newInputFile(file.location()).newStream();
              PositionOutputStream out = table.io().newOutputFile(target).createOrOverwrite()) {
            bytes += in.transferTo(out);
          }
          append.appendFile(DataFiles.builder(local.spec()).copy(file).withPath(target).build());
        }
        append.commit();
        String metadata =
            ((org.apache.iceberg.HasTableOperations) table)
                .operations()
                .refresh()
                .metadataFileLocation();
        return new S3Copy(
            server, endpoint, bucket, words[2], words[3], metadata, bytes, catalogDir);
      }
    } catch (Exception | Error e) {
      server.destroy();
      throw e;
    }
  }

  String metadataLocation() {
    return metadataLocation;
  }

  String endpoint() {
    return endpoint;
  }

  long bytes() {
    return bytes;
  }

  /** How the loader reaches the server, with object-store reads as a node's defaults make them. */
  StorageSettings settings() {
    return settings(StorageSettings.builder());
  }

  /** How the loader reaches the server, with {@code builder}'s object-store reads. */
  StorageSettings settings(StorageSettings.Builder builder) {
    return builder
        .s3Endpoint(endpoint)
        .s3PathStyleAccess(true)
        .s3Credentials(accessKey, secretKey)
        .region("us-east-1")
        .build();
  }

  /** How pyarrow_decode.py reaches the server. */
  List<String> pyarrowArguments() {
    return List.of(
        "--s3-endpoint",
        endpoint,
        "--s3-access-key",
        accessKey,
        "--s3-secret-key",
        secretKey,
        "--s3-region",
        "us-east-1");
  }

  @Override
  public void close() throws IOException, InterruptedException {
    try (OutputStream in = server.getOutputStream()) {
      // closing the server's standard input stops it
    }
    if (!server.waitFor(30, TimeUnit.SECONDS)) {
      server.destroy();
    }
    try (var paths = Files.walk(catalogDir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
