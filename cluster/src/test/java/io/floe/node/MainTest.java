package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The node launcher's command line: help and version without starting a node; bad options refused.
 */
class MainTest {
  private record Run(int exitCode, String out, String err) {}

  private static Run run(String... args) {
    return run(java.util.Map.of(), args);
  }

  private static Run run(java.util.Map<String, String> environment, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine command = Main.commandLine(new Main(environment));
    command.setOut(new PrintWriter(out));
    command.setErr(new PrintWriter(err));
    int code = command.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void helpDescribesTheNodeAndItsSettings() {
    Run run = run("--help");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("floe node", "--config", "--version", "FLOE_MEMORY_LIMIT", "SIGTERM");
    // The class archive's training run is the launcher's business, not an operator's option.
    assertThat(run.out()).doesNotContain("train-class-archive");
  }

  @Test
  void versionNamesTheBuild() {
    Run run = run("--version");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).startsWith("floe node ");
  }

  @Test
  void unknownOptionsAndArgumentsAreRefused() {
    Run run = run("--port", "1");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown options: '--port', '1'", "Usage: floe node");
  }

  @Test
  void settingsThatCannotStartANodeAreNamedWithoutAStackTrace(@TempDir Path dir)
      throws IOException {
    Path file = dir.resolve("floe.conf");
    Files.writeString(
        file, "floe.security.auth.anonymous = none\nfloe.security.auth.tokens-file = \"\"\n");
    Run run = run("--config", file.toString());
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .startsWith("floe node: No caller could reach this node")
        .contains("FLOE_AUTH_TOKENS_FILE")
        .doesNotContain("\tat ", "Exception");
  }

  @Test
  void aMissingSettingsFileIsNamed() {
    Run run = run("--config", "/nonexistent/floe.conf");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("No settings file at /nonexistent/floe.conf");
  }

  @Test
  void aSettingsFileMovesThePathsReferenceConfDerivesFromItsValues(@TempDir Path dir)
      throws IOException {
    Path file = dir.resolve("floe.conf");
    Files.writeString(
        file,
        "pekko.remote.artery.ssl.rotating-keys-engine.secret-mount-point = \"/etc/floe/tls\"\n"
            + "floe.catalogs { lake { type = rest, \"header.X-Iceberg-Access-Delegation\" = v } }\n");

    Config settings = Main.settings(file);

    // Pekko's reference.conf: ca-cert-file = ${...secret-mount-point}/ca.crt, and so on.
    String engine = "pekko.remote.artery.ssl.rotating-keys-engine.";
    assertThat(settings.getString(engine + "ca-cert-file")).isEqualTo("/etc/floe/tls/ca.crt");
    assertThat(settings.getString(engine + "key-file")).isEqualTo("/etc/floe/tls/tls.key");
    assertThat(settings.getString("floe.flight.port")).isEqualTo("47470");
    assertThat(
            settings
                .getConfig("floe.catalogs.lake")
                .getString("\"header.X-Iceberg-Access-Delegation\""))
        .isEqualTo("v");
  }

  @Test
  void anUnknownLogFormatIsRefusedBeforeTheNodeStarts() {
    Run run = run(java.util.Map.of("FLOE_LOG_FORMAT", "JSON"));
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("Invalid FLOE_LOG_FORMAT 'JSON': one of plain, json");
  }
}
