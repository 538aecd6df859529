package io.floe.initializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.spec.DatasetSpec;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The environment Kubeflow's SDK ({@code DataCacheInitializer}) and a Trainer runtime give the
 * dataset-initializer container, read as Floe's initializer reads it; every bad setting exits 2
 * before any connection is made.
 */
class KubeflowCacheEnvironmentTest {
  private static final String METADATA =
      "s3://lake/warehouse/analytics/events/metadata/00003-x.metadata.json";

  /** What the SDK (storage URI, CLUSTER_SIZE, METADATA_LOC, optional fields) and runtime set. */
  private static Map<String, String> sdkEnvironment() {
    Map<String, String> env = new HashMap<>();
    env.put("STORAGE_URI", "cache://analytics/events");
    env.put("CLUSTER_SIZE", "4");
    env.put("METADATA_LOC", METADATA);
    env.put("IAM_ROLE", "arn:aws:iam::123456789012:role/reader");
    env.put("HEAD_MEM", "2Gi");
    env.put("TRAIN_JOB_NAME", "fine-tune-7x2k");
    env.put("FLOE_ADDRESS", "grpc+tls://floe-flight.floe-example.svc:47470");
    env.put("FLOE_TOKEN", "operator-token-0123456789");
    env.put("FLOE_TLS_CA_FILE", "/etc/floe/tls/ca.crt");
    return env;
  }

  @Test
  void theSdksEnvironmentLoadsTheMetadataLocationAsTheTrainJobsDataset() {
    DatasetInitializer initializer = DatasetInitializer.parse(sdkEnvironment());
    DatasetSpec spec = initializer.spec();
    assertThat(spec.name()).isEqualTo("fine-tune-7x2k");
    assertThat(spec.table()).isEqualTo(METADATA);
    assertThat(spec.catalog()).isNull();
    assertThat(initializer.requestedDataNodes()).isEqualTo(3);
    assertThat(initializer.token).isEqualTo("operator-token-0123456789");
    assertThat(initializer.caFile).hasToString("/etc/floe/tls/ca.crt");
    assertThat(initializer.timeout).isEqualTo(Duration.ofHours(1));
  }

  /**
   * FLOE_TOKEN_FILE (a projected ServiceAccount token) as the Python client takes it: used when no
   * token is set; a flag beats the other's variable; both flags at once are refused.
   */
  @Test
  void aTokenFileIsTakenWhereNoTokenIsSetAndBothFlagsAreRefused() {
    Map<String, String> env = sdkEnvironment();
    env.remove("FLOE_TOKEN");
    env.put("FLOE_TOKEN_FILE", "/var/run/secrets/floe/token");
    assertThat(DatasetInitializer.parse(env).credentials())
        .isEqualTo(
            new DatasetInitializer.Credentials(
                null, java.nio.file.Path.of("/var/run/secrets/floe/token")));

    env.put("FLOE_TOKEN", "operator-token-0123456789");
    assertThat(DatasetInitializer.parse(env).credentials())
        .isEqualTo(new DatasetInitializer.Credentials("operator-token-0123456789", null));
    assertThat(DatasetInitializer.parse(env, "--token-file", "/tokens/t").credentials())
        .isEqualTo(new DatasetInitializer.Credentials(null, java.nio.file.Path.of("/tokens/t")));
    assertThat(DatasetInitializer.parse(env, "--token", "flag-token-0123456789").credentials())
        .isEqualTo(new DatasetInitializer.Credentials("flag-token-0123456789", null));
    assertThatThrownBy(
            () ->
                DatasetInitializer.parse(env, "--token", "t-0123456789abcdef", "--token-file", "/t")
                    .credentials())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("exclude each other");
  }

  @Test
  void floeDatasetNamesTheDatasetOverTheTrainJob() {
    Map<String, String> env = sdkEnvironment();
    env.put("FLOE_DATASET", "shared-events");
    env.put("FLOE_COLUMNS", "id,user_id");
    assertThat(DatasetInitializer.parse(env).spec().name()).isEqualTo("shared-events");
    assertThat(DatasetInitializer.parse(env).spec().columns()).containsExactly("id", "user_id");
  }

  @Test
  void withoutMetadataLocTheTableIsLookedUpInFloeCatalog() {
    Map<String, String> env = sdkEnvironment();
    env.remove("METADATA_LOC");
    env.put("FLOE_CATALOG", "lake");
    DatasetSpec spec = DatasetInitializer.parse(env).spec();
    assertThat(spec.table()).isEqualTo("analytics.events");
    assertThat(spec.catalog()).isEqualTo("lake");
  }

  @Test
  void optionsOverTheEnvironment() {
    DatasetInitializer initializer =
        DatasetInitializer.parse(sdkEnvironment(), "--dataset", "from-args", "--cluster-size", "2");
    assertThat(initializer.spec().name()).isEqualTo("from-args");
    assertThat(initializer.requestedDataNodes()).isEqualTo(1);
  }

  @Test
  void everyBadSettingExitsTwoBeforeConnecting() {
    List<Map<String, String>> bad =
        List.of(
            with("STORAGE_URI", "cache://analytics"),
            with("STORAGE_URI", "cache://analytics/events/2024"),
            with("STORAGE_URI", "hf://tatsu-lab/alpaca"),
            with("STORAGE_URI", null),
            with("METADATA_LOC", "metadata.json"),
            with("METADATA_LOC", null),
            with("CLUSTER_SIZE", "three"),
            with("CLUSTER_SIZE", "0"),
            with("TRAIN_JOB_NAME", null),
            with("TRAIN_JOB_NAME", "no/slashes"),
            with("FLOE_ADDRESS", null),
            with("FLOE_ADDRESS", "grpc+tcp://bad host:1"),
            with("FLOE_LOAD_TIMEOUT", "an hour"),
            with("FLOE_SNAPSHOT_ID", "latest"));
    for (Map<String, String> env : bad) {
      assertThat(DatasetInitializer.run(env)).as(env.toString()).isEqualTo(2);
    }
  }

  @Test
  void missingSettingsAreNamed() {
    assertThatThrownBy(() -> DatasetInitializer.parse(with("TRAIN_JOB_NAME", null)).spec())
        .hasMessageContaining("FLOE_DATASET")
        .hasMessageContaining("TRAIN_JOB_NAME");
    assertThatThrownBy(
            () -> DatasetInitializer.parse(with("CLUSTER_SIZE", "3.5")).requestedDataNodes())
        .hasMessageContaining("Invalid CLUSTER_SIZE '3.5'");
    assertThatThrownBy(() -> DatasetInitializer.parse(with("METADATA_LOC", null)).spec())
        .hasMessageContaining("METADATA_LOC")
        .hasMessageContaining("FLOE_CATALOG");
  }

  private static Map<String, String> with(String name, String value) {
    Map<String, String> env = sdkEnvironment();
    if (value == null) {
      env.remove(name);
    } else {
      env.put(name, value);
    }
    return env;
  }
}
