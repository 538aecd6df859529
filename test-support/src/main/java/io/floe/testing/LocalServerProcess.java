package io.floe.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A server binary run as a process on 127.0.0.1 for a test, stopped by its PID on close. Finds the
 * binary on PATH or where {@code .ci/install-object-store-emulators} puts it, and fails with what
 * to run when it is not installed.
 */
final class LocalServerProcess implements AutoCloseable {
  private final Process process;
  private final Path log;
  private final Path dataDir;

  private LocalServerProcess(Process process, Path log, Path dataDir) {
    this.process = process;
    this.log = log;
    this.dataDir = dataDir;
  }

  /** The binary named {@code name}: on PATH, or at one of {@code installed}. */
  static Path find(String name, List<Path> installed) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path candidate = Path.of(dir, name);
      if (!dir.isEmpty() && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return installed.stream()
        .filter(Files::isExecutable)
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    name
                        + " is not installed (looked on PATH and in "
                        + installed
                        + "): run .ci/install-object-store-emulators"));
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** Starts {@code command} and waits until something accepts connections on {@code port}. */
  static LocalServerProcess start(List<String> command, int port, Path dataDir) throws Exception {
    Path log = Files.createTempFile("floe-server-", ".log");
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .start();
    LocalServerProcess server = new LocalServerProcess(process, log, dataDir);
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      try (Socket socket = new Socket("127.0.0.1", port)) {
        return server;
      } catch (IOException notYet) {
        if (!process.isAlive() || System.nanoTime() > deadline) {
          String output = Files.readString(log);
          server.close();
          throw new IllegalStateException(command.get(0) + " did not start:\n" + output);
        }
        Thread.sleep(100);
      }
    }
  }

  Optional<String> output() {
    try {
      return Optional.of(Files.readString(log));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
    }
    Files.deleteIfExists(log);
    if (dataDir != null) {
      try (var paths = Files.walk(dataDir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
