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
 * refused exits 1 with the reason, so the trainer step (which depends on this one completing) never
 * starts on a missing dataset. Every option defaults to the environment variable it names, which is
 * how Trainer hands a TrainJob's {@code initializer.dataset} to the container.
 */
@Command(
    name = "floe-dataset-initializer",
    mixinStandardHelpOptions = true,
    version = "floe-dataset-initializer 0.1.0",
    description = "Loads a TrainJob's dataset on a Floe cluster and waits until it is READY.")
public final class DatasetInitializer implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(DatasetInitializer.class);

  @Option(
      names = "--address",
      defaultValue = "${env:FLOE_ADDRESS}",
      required = true,
      description =
          "A node's Flight address (FLOE_ADDRESS), e.g. grpc+tcp://floe-flight.ml.svc:47470.")
  String address;

  @Option(
      names = "--storage-uri",
      defaultValue = "${env:STORAGE_URI}",
      required = true,
      description =
          "floe://<catalog>.<db>.<table> or a table location (STORAGE_URI: the TrainJob's"
              + " spec.initializer.dataset.storageUri).")
  String storageUri;

  @Option(
      names = "--dataset",
      defaultValue = "${env:FLOE_DATASET}",
      required = true,
      description =
          "The dataset's name on the cluster (FLOE_DATASET; the runtime sets the TrainJob's name).")
  String dataset;

  @Option(
      names = "--columns",
      defaultValue = "${env:FLOE_COLUMNS}",
      split = ",",
      description = "Comma-separated columns to load (FLOE_COLUMNS; default: all).")
  List<String> columns;

  @Option(
      names = "--filter",
      defaultValue = "${env:FLOE_FILTER}",
      description = "A row filter (FLOE_FILTER; docs/filter-syntax.md).")
  String filter;

  @Option(
      names = "--snapshot-id",
      defaultValue = "${env:FLOE_SNAPSHOT_ID}",
      description = "A snapshot to pin (FLOE_SNAPSHOT_ID; default: the newest).")
  Long snapshotId;

  @Option(
      names = "--token",
      defaultValue = "${env:FLOE_TOKEN}",
      description = "Bearer token with the operator role (FLOE_TOKEN).")
  String token;

  @Option(
      names = "--ca-file",
      defaultValue = "${env:FLOE_TLS_CA_FILE}",
      description = "CA bundle for grpc+tls nodes (FLOE_TLS_CA_FILE).")
  Path caFile;

  @Option(
      names = "--timeout",
      defaultValue = "${env:FLOE_LOAD_TIMEOUT:-PT1H}",
      converter = DurationConverter.class,
      description = "How long to wait for READY (FLOE_LOAD_TIMEOUT, ISO-8601, default PT1H).")
  Duration timeout;

  @Option(
      names = "--poll",
      defaultValue = "PT2S",
      converter = DurationConverter.class,
      description = "How often to ask for the dataset's progress.")
  Duration poll;

  @Override
  public Integer call() throws Exception {
    DatasetSpec spec =
        new DatasetSpec(
            dataset,
            StorageUri.parse(storageUri).table(),
            null,
            snapshotId,
            null,
            columns == null || columns.isEmpty() ? null : List.copyOf(columns),
            filter == null || filter.isBlank() ? null : filter,
            DatasetSpec.BATCH_ROWS_DEFAULT);
    try (BufferAllocator allocator = new RootAllocator();
        FloeClient client = connect(allocator)) {
      long started = System.nanoTime();
      LOG.info("Loading dataset '{}' from {} through {}", dataset, storageUri, address);
      DatasetStatusReply status = client.load(new LoadRequest(spec, false));
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

  private FloeClient connect(BufferAllocator allocator) {
    FloeClient.Builder builder = FloeClient.builder(allocator, location(address));
    if (token != null && !token.isBlank()) {
      builder.token(token);
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
    System.exit(run(args));
  }

  /** Runs the initializer; answers its exit code (2: bad usage, 1: the load failed). */
  public static int run(String... args) {
    CommandLine command = new CommandLine(new DatasetInitializer());
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
}
