package io.floe.testing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * fake-gcs-server (Google Cloud Storage's JSON API, in memory) as a process on 127.0.0.1, with one
 * bucket, for Iceberg's GCSFileIO.
 */
public final class FakeGcsServer implements AutoCloseable {
  public static final String PROJECT = "floe-test";

  private final LocalServerProcess process;
  private final int port;
  private final String bucket;

  private FakeGcsServer(LocalServerProcess process, int port, String bucket) {
    this.process = process;
    this.port = port;
    this.bucket = bucket;
  }

  public static FakeGcsServer start() throws Exception {
    Path binary =
        LocalServerProcess.find(
            "fake-gcs-server",
            List.of(Path.of(System.getProperty("user.home"), "go", "bin", "fake-gcs-server")));
    int port = LocalServerProcess.freePort();
    String endpoint = "http://127.0.0.1:" + port;
    LocalServerProcess process =
        LocalServerProcess.start(
            List.of(
                binary.toString(),
                "-host",
                "127.0.0.1",
                "-port",
                String.valueOf(port),
                "-scheme",
                "http",
                "-backend",
                "memory",
                "-external-url",
                endpoint,
                "-log-level",
                "warn"),
            port,
            null);
    String bucket = "floe-test-bucket";
    HttpResponse<String> created =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(endpoint + "/storage/v1/b?project=" + PROJECT))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\": \"" + bucket + "\"}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    if (created.statusCode() / 100 != 2) {
      process.close();
      throw new IllegalStateException("Could not create bucket: " + created.body());
    }
    return new FakeGcsServer(process, port, bucket);
  }

  public String bucket() {
    return bucket;
  }

  /** {@code gs://<bucket>/<path>}. */
  public String uri(String path) {
    return "gs://" + bucket + "/" + path;
  }

  /** Iceberg GCSFileIO properties reaching this server, with no credentials. */
  public Map<String, String> fileIOProperties() {
    return Map.of(
        "gcs.service.host",
        "http://127.0.0.1:" + port,
        "gcs.no-auth",
        "true",
        "gcs.project-id",
        PROJECT);
  }

  @Override
  public void close() throws Exception {
    process.close();
  }
}
