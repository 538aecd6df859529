package io.floe.catalog;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Iceberg's REST catalog server ({@code LoopbackCatalogServer}) as a process of its own on
 * 127.0.0.1, with the catalog properties given; stopped by its PID on close.
 */
final class RestCatalogProcess implements AutoCloseable {
  private final Process process;
  private final int port;
  private final Path log;

  private RestCatalogProcess(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  static RestCatalogProcess start(Map<String, String> properties) throws IOException {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx256m");
    command.add("-cp");
    command.add(classpath);
    command.add("org.apache.iceberg.rest.LoopbackCatalogServer");
    command.add("port=0");
    properties.forEach((k, v) -> command.add(k + "=" + v));
    Path log = Files.createTempFile("rest-catalog-", ".log");
    Process process =
        new ProcessBuilder(command)
            .redirectError(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    // Logging set-up may print its own status lines first.
    String line = out.readLine();
    while (line != null && !line.startsWith("LISTENING ")) {
      line = out.readLine();
    }
    if (line == null) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "The REST catalog server did not start: " + line + "\n" + Files.readString(log));
    }
    return new RestCatalogProcess(process, Integer.parseInt(line.substring(10).trim()), log);
  }

  String uri() {
    return "http://127.0.0.1:" + port;
  }

  long pid() {
    return process.pid();
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
    }
    Files.deleteIfExists(log);
  }
}
