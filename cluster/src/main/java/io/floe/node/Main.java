package io.floe.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Starts a data node from application.conf and the environment; SIGTERM shuts it down in order. */
@Command(
    name = "floe node",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = {
      "Runs a Floe data node: a member of its cluster that holds slices of datasets in Arrow"
          + " memory and serves them over Arrow Flight. SIGTERM leaves the cluster in order.",
      "",
      "Settings come from application.conf, overridden by FLOE_* environment variables and -D"
          + " system properties (README.md, \"Configuration\"), e.g. FLOE_FLIGHT_PORT,"
          + " FLOE_MEMORY_LIMIT, FLOE_AUTH_TOKENS_FILE, FLOE_ALLOWED_LOCATIONS, FLOE_TLS_CERT_FILE,"
          + " FLOE_STATE_DIR, FLOE_LOG_FORMAT."
    })
public final class Main implements Callable<Integer> {
  /** The values of FLOE_LOG_FORMAT, each a logback fragment floe-log-VALUE.xml in this module. */
  private static final java.util.List<String> LOG_FORMATS = java.util.List.of("plain", "json");

  private final java.util.Map<String, String> environment;
  private final StartupTimeline timeline = StartupTimeline.begin();

  public Main() {
    this(System.getenv());
  }

  Main(java.util.Map<String, String> environment) {
    this.environment = environment;
  }

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description =
          "A HOCON file of settings laid over application.conf and the FLOE_* variables;"
              + " -D system properties still win.")
  private Path config;

  @Option(
      names = "--train-class-archive",
      hidden = true,
      description =
          "Start a node on its own on free ports of 127.0.0.1, wait until it is ready and answers,"
              + " then leave and exit: the training run of the class-data-sharing archive (the"
              + " ./floe launcher runs it under -XX:ArchiveClassesAtExit).")
  private boolean trainClassArchive;

  @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    // Checked before anything logs: logback would otherwise start with no appender, silently.
    String format = environment.get("FLOE_LOG_FORMAT");
    if (format != null && !format.isEmpty() && !LOG_FORMATS.contains(format)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "Invalid FLOE_LOG_FORMAT '" + format + "': one of " + String.join(", ", LOG_FORMATS));
    }
    // gRPC logs through java.util.logging; send it to logback with the rest.
    org.slf4j.bridge.SLF4JBridgeHandler.removeHandlersForRootLogger();
    org.slf4j.bridge.SLF4JBridgeHandler.install();
    timeline.step("command line");
    Config settings = settings();
    timeline.step("config");
    if (trainClassArchive) {
      ClassArchiveTraining.run(settings, timeline);
      return 0;
    }
    FloeNode node = FloeNode.start(settings, timeline);
    node.whenClosed().join();
    return 0;
  }

  private Config settings() {
    if (config == null) {
      return ConfigFactory.load();
    }
    if (!Files.isRegularFile(config)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "No settings file at " + config);
    }
    return settings(config);
  }

  /**
   * The file laid over application.conf, under the system properties. reference.conf joins
   * unresolved, so that its substitutions follow the values above it: Pekko's TLS key, certificate
   * and CA paths are {@code ${...secret-mount-point}/tls.key} and so on, and a reference resolved
   * on its own kept them at Pekko's default directory whatever FLOE_REMOTE_TLS_DIR said.
   */
  static Config settings(Path file) {
    ConfigFactory.invalidateCaches();
    return ConfigFactory.systemProperties()
        .withFallback(ConfigFactory.parseFile(file.toFile()))
        .withFallback(ConfigFactory.defaultApplication())
        .withFallback(ConfigFactory.defaultReferenceUnresolved())
        .resolve();
  }

  /** The version of the jar the node runs from; a development build from a source tree. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = Main.class.getPackage().getImplementationVersion();
      return new String[] {"floe node " + (version != null ? version : "(development build)")};
    }
  }

  public static void main(String[] args) {
    System.exit(commandLine(new Main()).execute(args));
  }

  /** The command; settings that cannot start a node are reported by their message, exit code 2. */
  static CommandLine commandLine(Main main) {
    CommandLine line = new CommandLine(main);
    line.setExecutionExceptionHandler(
        (error, command, parsed) -> {
          if (error instanceof InvalidSettingsException) {
            command.getErr().println("floe node: " + error.getMessage());
            return 2;
          }
          throw error;
        });
    return line;
  }
}
