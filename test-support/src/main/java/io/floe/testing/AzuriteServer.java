package io.floe.testing;

import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.common.StorageSharedKeyCredential;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Azurite's Blob service as a process on 127.0.0.1, with one container, for Iceberg's ADLSFileIO
 * under a shared key. Azurite has no Data Lake (DFS) endpoint: reading and writing single files
 * works, listing and deleting by prefix do not.
 */
public final class AzuriteServer implements AutoCloseable {
  /** Azurite's published development account and key (not a secret). */
  public static final String ACCOUNT = "devstoreaccount1";

  public static final String KEY =
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

  private final LocalServerProcess process;
  private final int port;
  private final String container;

  private AzuriteServer(LocalServerProcess process, int port, String container) {
    this.process = process;
    this.port = port;
    this.container = container;
  }

  public static AzuriteServer start() throws Exception {
    Path binary =
        LocalServerProcess.find(
            "azurite-blob",
            List.of(
                Path.of(
                    System.getProperty("user.home"),
                    ".cache/floe/azurite/node_modules/.bin/azurite-blob")));
    int port = LocalServerProcess.freePort();
    Path data = Files.createTempDirectory("floe-azurite-");
    LocalServerProcess process =
        LocalServerProcess.start(
            List.of(
                binary.toString(),
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                String.valueOf(port),
                "--location",
                data.toString(),
                "--skipApiVersionCheck",
                "--loose",
                "--disableTelemetry",
                "--silent"),
            port,
            data);
    String container = "floe-test";
    new BlobServiceClientBuilder()
        .endpoint(endpoint(port))
        .credential(new StorageSharedKeyCredential(ACCOUNT, KEY))
        .buildClient()
        .createBlobContainerIfNotExists(container);
    return new AzuriteServer(process, port, container);
  }

  private static String endpoint(int port) {
    return "http://127.0.0.1:" + port + "/" + ACCOUNT;
  }

  /** {@code abfs://<container>@devstoreaccount1.dfs.core.windows.net/<path>}. */
  public String uri(String path) {
    return "abfs://" + container + "@" + ACCOUNT + ".dfs.core.windows.net/" + path;
  }

  /** Iceberg ADLSFileIO properties reaching this server with the shared key {@code key}. */
  public Map<String, String> fileIOProperties(String key) {
    return Map.of(
        "adls.connection-string." + ACCOUNT + ".dfs.core.windows.net",
        endpoint(port),
        "adls.auth.shared-key.account.name",
        ACCOUNT,
        "adls.auth.shared-key.account.key",
        key);
  }

  @Override
  public void close() throws Exception {
    process.close();
  }
}
