package io.floe.initializer;

import io.floe.client.FloeClient;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.ErrorReply;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The dataset-initializer step of a Kubeflow TrainJob on Floe: loads the TrainJob's dataset on the
 * shared Floe cluster, logs its progress until it is READY and exits 0; a load that fails or is
 * refused exits 1 with the reason, and a setting that is wrong or missing exits 2 naming it, so the
 * trainer step (which depends on this one completing) never starts on a missing dataset.
 *
 * <p>Every option defaults to the environment variable it names, which is how Trainer hands a
 * TrainJob's {@code initializer.dataset} to the container. That includes what Kubeflow's SDK sets
 * for its data cache ({@code DataCacheInitializer}): {@code STORAGE_URI=cache://<schema>/<table>}
 * with {@code METADATA_LOC} (see {@link StorageUri}), {@code TRAIN_JOB_NAME} (the dataset's name
 * unless {@code FLOE_DATASET} is set), {@code CLUSTER_SIZE} (only compared with the data nodes Up
 * and logged: Floe's nodes are a StatefulSet of their own, which this step does not resize) and
 * {@code IAM_ROLE} (not assumed: the nodes read tables with their own credentials; logged).
 */
@Command(
    name = "floe-dataset-initializer",
    mixinStandardHelpOptions = true,
    version = "floe-dataset-initializer 0.1.0",
    description = "Loads a TrainJob's dataset on a Floe cluster and waits until it is READY.")
public final class DatasetInitializer implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(DatasetInitializer.class);

  /** The environment variable behind each option: the one place an option meets its variable. */
  private static final Map<String, String> ENV =
      Map.ofEntries(
          Map.entry("--address", "FLOE_ADDRESS"),
          Map.entry("--storage-uri", "STORAGE_URI"),
          Map.entry("--metadata-location", "METADATA_LOC"),
          Map.entry("--catalog", "FLOE_CATALOG"),
          Map.entry("--dataset", "FLOE_DATASET"),
          Map.entry("--train-job-name", "TRAIN_JOB_NAME"),
          Map.entry("--cluster-size", "CLUSTER_SIZE"),
          Map.entry("--iam-role", "IAM_ROLE"),
          Map.entry("--columns", "FLOE_COLUMNS"),
          Map.entry("--filter", "FLOE_FILTER"),
          Map.entry("--snapshot-id", "FLOE_SNAPSHOT_ID"),
          Map.entry("--token", "FLOE_TOKEN"),
          Map.entry("--token-file", "FLOE_TOKEN_FILE"),
          Map.entry("--ca-file", "FLOE_TLS_CA_FILE"),
          Map.entry("--timeout", "FLOE_LOAD_TIMEOUT"));

  private static final String TIMEOUT_DEFAULT = "PT1H";

  /**
   * What Kubeflow's SDK and its cache runtime also set, for the cache pods Kubeflow would start:
   * Floe starts none, so these are logged as unused.
   */
  private static final List<String> UNUSED_CACHE_SETTINGS =
      List.of("CACHE_IMAGE", "HEAD_CPU", "HEAD_MEM", "WORKER_CPU", "WORKER_MEM");

  private final Map<String, String> env;

  DatasetInitializer(Map<String, String> env) {
    this.env = env;
  }

  @Option(
      names = "--address",
      description =
          "A node's Flight address (FLOE_ADDRESS), e.g. grpc+tls://floe-flight.ml.svc:47470.")
  String address;

  @Option(
      names = "--storage-uri",
      description =
          "floe://<catalog>.<db>.<table>, cache://<schema>/<table> or a table location"
              + " (STORAGE_URI: the TrainJob's spec.initializer.dataset.storageUri).")
  String storageUri;

  @Option(
      names = "--metadata-location",
      description =
          "The table's metadata.json, for a cache:// storage URI (METADATA_LOC, as Kubeflow's"
              + " SDK sets it).")
  String metadataLocation;

  @Option(
      names = "--catalog",
      description =
          "The Floe catalog holding <schema>.<table> of a cache:// storage URI when there is no"
              + " METADATA_LOC (FLOE_CATALOG).")
  String catalog;

  @Option(
      names = "--dataset",
      description =
          "The dataset's name on the cluster (FLOE_DATASET; default: the TrainJob's name).")
  String dataset;

  @Option(
      names = "--train-job-name",
      description =
          "The TrainJob's name (TRAIN_JOB_NAME, which the runtime sets): the dataset's name"
              + " unless FLOE_DATASET is set.")
  String trainJobName;

  @Option(
      names = "--cluster-size",
      description =
          "The cache pods the TrainJob asked for (CLUSTER_SIZE: Kubeflow's SDK sets data nodes +"
              + " 1): compared with the data nodes Up and logged; Floe's cluster is not resized.")
  String clusterSize;

  @Option(
      names = "--iam-role",
      description =
          "The role Kubeflow's cache would read the table with (IAM_ROLE): logged, not assumed;"
              + " Floe's nodes read with their own credentials.")
  String iamRole;

  @Option(
      names = "--columns",
      split = ",",
      description = "Comma-separated columns to load (FLOE_COLUMNS; default: all).")
  List<String> columns;

  @Option(names = "--filter", description = "A row filter (FLOE_FILTER; docs/filter-syntax.md).")
  String filter;

  @Option(
      names = "--snapshot-id",
      description = "A snapshot to pin (FLOE_SNAPSHOT_ID; default: the newest).")
  Long snapshotId;

  @Option(names = "--token", description = "Bearer token with the operator role (FLOE_TOKEN).")
  String token;

  @Option(
      names = "--token-file",
      description =
          "Instead of --token, a file holding it, read again when it changes: a projected"
              + " ServiceAccount token (FLOE_TOKEN_FILE; used when no token is set).")
  Path tokenFile;

  @CommandLine.Spec CommandLine.Model.CommandSpec command;

  @Option(names = "--ca-file", description = "CA bundle for grpc+tls nodes (FLOE_TLS_CA_FILE).")
  Path caFile;

  @Option(
      names = "--timeout",
      converter = DurationConverter.class,
      description = "How long to wait for READY (FLOE_LOAD_TIMEOUT, ISO-8601, default PT1H).")
  Duration timeout;

  @Option(
      names = "--poll",
      defaultValue = "PT2S",
      converter = DurationConverter.class,
      description = "How often to ask for the dataset's progress.")
  Duration poll;

  /**
   * The load this initializer asks for, from its options: the dataset's name and table.
   *
   * @throws IllegalArgumentException naming the setting that is missing or wrong
   */
  DatasetSpec spec() {
    StorageUri source = StorageUri.resolve(storageUri, metadataLocation, catalog);
    return new DatasetSpec(
        DatasetSpec.checkName(datasetName()),
        source.table(),
        source.catalog(),
        snapshotId,
        null,
        columns == null || columns.isEmpty() ? null : List.copyOf(columns),
        filter == null || filter.isBlank() ? null : filter,
        DatasetSpec.BATCH_ROWS_DEFAULT);
  }

  /** FLOE_DATASET, else the TrainJob's name, as Kubeflow's cache names its cluster after it. */
  private String datasetName() {
    if (dataset != null && !dataset.isBlank()) {
      return dataset.strip();
    }
    if (trainJobName != null && !trainJobName.isBlank()) {
      return trainJobName.strip();
    }
    throw new IllegalArgumentException(
        "No dataset name: set FLOE_DATASET, or TRAIN_JOB_NAME (the runtime sets it to the"
            + " TrainJob's name)");
  }

  /** CLUSTER_SIZE as a number of data nodes (Kubeflow's SDK adds one for its cache's head). */
  Integer requestedDataNodes() {
    if (clusterSize == null || clusterSize.isBlank()) {
      return null;
    }
    int size;
    try {
      size = Integer.parseInt(clusterSize.strip());
    } catch (NumberFormatException e) {
      size = 0;
    }
    if (size < 1) {
      throw new IllegalArgumentException(
          "Invalid CLUSTER_SIZE '"
              + clusterSize
              + "': a whole number of cache pods, at least 1 (Kubeflow's SDK sets num_data_nodes +"
              + " 1)");
    }
    return Math.max(1, size - 1);
  }

  @Override
  public Integer call() throws Exception {
    if (address == null || address.isBlank()) {
      throw new IllegalArgumentException(
          "No Floe address: set FLOE_ADDRESS (e.g. grpc+tls://floe-flight.ml.svc:47470)");
    }
    Location location = location(address);
    DatasetSpec spec = spec();
    Integer requestedDataNodes = requestedDataNodes();
    logKubeflowSettings(spec);
    String dataset = spec.name();
    try (BufferAllocator allocator = new RootAllocator();
        FloeClient client = connect(allocator, location)) {
      long started = System.nanoTime();
      LOG.info(
          "Loading dataset '{}' ({}) from {} through {}",
          dataset,
          storageUri.strip(),
          spec.catalog() == null ? spec.table() : spec.table() + " in catalog " + spec.catalog(),
          address);
      DatasetStatusReply status = client.load(new LoadRequest(spec, false));
      if (requestedDataNodes != null) {
        compareClusterSize(client, requestedDataNodes, clusterSize.strip());
      }
      long deadline = started + timeout.toNanos();
      String last = "";
      while (!status.state().isDone()) {
        if (System.nanoTime() > deadline) {
          LOG.error(
              "Dataset '{}' is not READY after {}: {}",
              dataset,
              timeout,
              LoadProgress.describe(dataset, status, since(started)));
          return 1;
        }
        String line = LoadProgress.describe(dataset, status, since(started));
        if (!line.equals(last)) {
          LOG.info(line);
          last = line;
        }
        Thread.sleep(poll.toMillis());
        status = client.status(dataset);
      }
      if (status.state() == DatasetStatusReply.State.FAILED) {
        ErrorReply error = status.error();
        LOG.error(
            "Dataset '{}' FAILED ({}): {}",
            dataset,
            error == null ? "?" : error.kind(),
            error == null ? "" : error.message());
        return 1;
      }
      LOG.info(LoadProgress.describe(dataset, status, since(started)));
      LOG.info("Dataset '{}' is READY in {} s", dataset, since(started).toSeconds());
      return 0;
    } catch (FlightRuntimeException e) {
      if (ErrorCode.of(e).isEmpty()
          && e.status().code() == org.apache.arrow.flight.FlightStatusCode.UNAVAILABLE) {
        LOG.error(
            "Could not reach the Floe cluster at {} to load dataset '{}': {}",
            address,
            dataset,
            e.getMessage());
        return 1;
      }
      LOG.error(
          "Loading dataset '{}' was refused ({}{}): {}",
          dataset,
          e.status().code(),
          ErrorCode.of(e).map(code -> ", " + code).orElse(""),
          e.getMessage());
      return 1;
    }
  }

  /** Says plainly which of the SDK's cache settings Floe does not act on. */
  private void logKubeflowSettings(DatasetSpec spec) {
    if (iamRole != null && !iamRole.isBlank()) {
      LOG.warn(
          "IAM_ROLE {} is not assumed: Floe's nodes read table {} with their own credentials (the"
              + " role of their ServiceAccount, or FLOE_S3_* keys); that role needs read access to"
              + " it",
          iamRole.strip(),
          spec.catalog() == null ? spec.table() : spec.table() + " in catalog " + spec.catalog());
    }
    List<String> unused =
        UNUSED_CACHE_SETTINGS.stream()
            .filter(name -> env.get(name) != null && !env.get(name).isBlank())
            .map(name -> name + "=" + env.get(name))
            .toList();
    if (!unused.isEmpty()) {
      LOG.info(
          "Not used by Floe, whose nodes are a StatefulSet of their own: {} (they size the cache"
              + " pods Kubeflow's own initializer would start)",
          String.join(", ", unused));
    }
  }

  /** CLUSTER_SIZE against the data nodes Up: logged only, as Floe's cluster is shared. */
  private static void compareClusterSize(FloeClient client, int requested, String clusterSize) {
    int up;
    try {
      up = client.cluster().dataNodesUp();
    } catch (FlightRuntimeException e) {
      LOG.warn("Could not ask the Floe cluster how many data nodes are Up: {}", e.getMessage());
      return;
    }
    String message =
        "The TrainJob asked for {} data nodes (CLUSTER_SIZE {}); Floe's shared cluster serves the"
            + " dataset from the {} data nodes Up, and this step does not resize it";
    if (up < requested) {
      LOG.warn(message, requested, clusterSize, up);
    } else {
      LOG.info(message, requested, clusterSize, up);
    }
  }

  /** The caller's credentials: a token, a file holding one, or neither (anonymous). */
  record Credentials(String token, Path tokenFile) {}

  /**
   * The token this step sends, chosen as the Python client chooses it: {@code --token} and {@code
   * --token-file} on the command line exclude each other; either given there wins over the other's
   * variable; with both from the environment FLOE_TOKEN wins over FLOE_TOKEN_FILE.
   *
   * @throws IllegalArgumentException when both are given on the command line
   */
  Credentials credentials() {
    CommandLine.ParseResult parsed = command.commandLine().getParseResult();
    boolean tokenGiven = parsed != null && parsed.hasMatchedOption("--token");
    boolean fileGiven = parsed != null && parsed.hasMatchedOption("--token-file");
    if (tokenGiven && fileGiven) {
      throw new IllegalArgumentException(
          "--token and --token-file exclude each other: give one (or FLOE_TOKEN or"
              + " FLOE_TOKEN_FILE)");
    }
    if (token != null && !token.isBlank() && !fileGiven) {
      if (tokenFile != null) {
        LOG.warn("Token file {} is not read: a token is set (--token or FLOE_TOKEN)", tokenFile);
      }
      return new Credentials(token.strip(), null);
    }
    return new Credentials(null, tokenFile);
  }

  private FloeClient connect(BufferAllocator allocator, Location location) {
    FloeClient.Builder builder = FloeClient.builder(allocator, location);
    Credentials credentials = credentials();
    if (credentials.token() != null) {
      builder.token(credentials.token());
    } else if (credentials.tokenFile() != null) {
      builder.tokenFile(credentials.tokenFile());
    }
    if (caFile != null) {
      builder.trustedCertificates(caFile);
    }
    return builder.build();
  }

  /** A Flight location; host:port alone means grpc+tcp. */
  static Location location(String address) {
    String uri = address.contains("://") ? address : "grpc+tcp://" + address;
    try {
      return new Location(uri);
    } catch (java.net.URISyntaxException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Invalid Floe address '" + address + "': " + e.getMessage(), e);
    }
  }

  private static Duration since(long startedNanos) {
    return Duration.ofNanos(System.nanoTime() - startedNanos);
  }

  /** ISO-8601 durations (PT1H, PT30S). */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      return Duration.parse(value);
    }
  }

  public static void main(String[] args) {
    System.exit(run(System.getenv(), args));
  }

  /** Runs the initializer with this process's environment; see {@link #run(Map, String...)}. */
  public static int run(String... args) {
    return run(System.getenv(), args);
  }

  /**
   * Runs the initializer with options defaulting to {@code env}; answers its exit code (2: a
   * setting is missing or wrong, 1: the load failed or was refused, 0: the dataset is READY).
   */
  public static int run(Map<String, String> env, String... args) {
    CommandLine command = commandLine(env);
    command.setExecutionExceptionHandler(
        (e, line, parsed) -> {
          if (e instanceof IllegalArgumentException) {
            LOG.error("{}", e.getMessage());
            return 2;
          }
          throw e;
        });
    return command.execute(args);
  }

  /** Parses {@code args} over {@code env} without running: for tests of the settings. */
  static DatasetInitializer parse(Map<String, String> env, String... args) {
    CommandLine command = commandLine(env);
    command.parseArgs(args);
    return command.getCommand();
  }

  private static CommandLine commandLine(Map<String, String> env) {
    CommandLine command = new CommandLine(new DatasetInitializer(env));
    command.setDefaultValueProvider(
        spec -> {
          if (!(spec instanceof CommandLine.Model.OptionSpec option)) {
            return null;
          }
          String variable = ENV.get(option.longestName());
          String value = variable == null ? null : env.get(variable);
          if ((value == null || value.isBlank()) && "--timeout".equals(option.longestName())) {
            return TIMEOUT_DEFAULT;
          }
          return value == null || value.isBlank() ? null : value;
        });
    return command;
  }
}
