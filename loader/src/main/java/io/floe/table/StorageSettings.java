package io.floe.table;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigUtil;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * How the node reads files of tables named by location, as Iceberg FileIO properties under
 * Iceberg's own names ({@code s3.endpoint}, {@code s3.path-style-access}, {@code s3.access-key-id},
 * {@code client.region}, {@code gcs.project-id}, {@code adls.*}, ...), so that what users have in
 * {@code .pyiceberg.yaml} or Spark configs carries over. Catalogs start from these properties too
 * and add their own ({@link CatalogSettings}).
 *
 * <p>Read from the {@code floe.storage} block: the common S3 settings under {@code s3} (with {@code
 * FLOE_S3_*} variables), any other property under {@code properties}, and any property from {@code
 * FLOE_STORAGE__*} variables ({@link EnvironmentProperties}). Without static S3 keys, S3 uses the
 * AWS SDK's default chain: environment, profile, web identity (IRSA), EKS Pod Identity, instance
 * role. Secrets never appear in {@link #toString()}.
 */
public final class StorageSettings {
  public static final String S3_ENDPOINT = "s3.endpoint";
  public static final String S3_PATH_STYLE_ACCESS = "s3.path-style-access";
  public static final String S3_ACCESS_KEY_ID = "s3.access-key-id";
  public static final String S3_SECRET_ACCESS_KEY = "s3.secret-access-key";
  public static final String CLIENT_REGION = "client.region";

  /** {@code floe.storage.object-store.parallel-requests}'s default. */
  public static final int PARALLEL_REQUESTS_DEFAULT = 16;

  /** {@code floe.storage.object-store.range-size}'s default. */
  public static final long RANGE_SIZE_DEFAULT = 8L << 20;

  private final Map<String, String> properties;
  private final Map<String, String> hadoopProperties;
  private final int parallelRequests;
  private final long rangeSize;

  private StorageSettings(Builder builder) {
    this.properties = Map.copyOf(builder.properties);
    this.hadoopProperties = Map.copyOf(builder.hadoopProperties);
    this.parallelRequests = builder.parallelRequests;
    this.rangeSize = builder.rangeSize;
  }

  public static StorageSettings defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads the {@code floe.storage} block and the {@code FLOE_STORAGE__*} variables of {@code env};
   * blank strings count as unset.
   */
  public static StorageSettings fromConfig(Config storage, Map<String, String> env) {
    Builder builder = builder();
    builder.property(S3_ENDPOINT, optional(storage, "s3.endpoint"));
    builder.property(CLIENT_REGION, optional(storage, "s3.region"));
    builder.property(S3_PATH_STYLE_ACCESS, optional(storage, "s3.path-style-access"));
    builder.property(S3_ACCESS_KEY_ID, optional(storage, "s3.access-key"));
    builder.property(S3_SECRET_ACCESS_KEY, optional(storage, "s3.secret-key"));
    if (storage.hasPath("properties")) {
      flatten(storage.getConfig("properties")).forEach(builder::property);
    }
    EnvironmentProperties.storage(env).forEach(builder::property);
    if (storage.hasPath("hadoop")) {
      flatten(storage.getConfig("hadoop")).forEach(builder::hadoopProperty);
    }
    if (storage.hasPath("object-store.parallel-requests")) {
      builder.parallelRequests(storage.getInt("object-store.parallel-requests"));
    }
    if (storage.hasPath("object-store.range-size")) {
      builder.rangeSize(storage.getBytes("object-store.range-size"));
    }
    return builder.build();
  }

  /** A config block as flat properties: {@code s3 { endpoint = x }} is {@code s3.endpoint}. */
  static Map<String, String> flatten(Config block) {
    Map<String, String> flat = new LinkedHashMap<>();
    block
        .entrySet()
        .forEach(
            e ->
                flat.put(
                    String.join(".", ConfigUtil.splitPath(e.getKey())),
                    String.valueOf(e.getValue().unwrapped())));
    return flat;
  }

  private static String optional(Config config, String path) {
    if (!config.hasPath(path)) {
      return null;
    }
    String value = config.getString(path).trim();
    return value.isEmpty() ? null : value;
  }

  /** The Iceberg FileIO properties for tables named by location. */
  public Map<String, String> properties() {
    return properties;
  }

  /**
   * Ranged requests to object stores in flight at once on the node, for all loads together; 0 reads
   * each range of a row group with one request after another, as Iceberg's FileIOs do.
   */
  public int parallelRequests() {
    return parallelRequests;
  }

  /** The most bytes one ranged request to an object store asks for. */
  public long rangeSize() {
    return rangeSize;
  }

  public boolean hasStaticS3Credentials() {
    return properties.containsKey(S3_ACCESS_KEY_ID) && properties.containsKey(S3_SECRET_ACCESS_KEY);
  }

  /** The Hadoop configuration for local paths (Hadoop's local file system) and Parquet. */
  public Configuration hadoopConfiguration() {
    Configuration conf = new Configuration(false);
    hadoopProperties.forEach(conf::set);
    return conf;
  }

  @Override
  public String toString() {
    return "StorageSettings{properties="
        + Secrets.redacted(properties)
        + ", s3Credentials="
        + (hasStaticS3Credentials() ? "static (hidden)" : "aws default chain")
        + ", hadoopProperties="
        + hadoopProperties.keySet()
        + ", objectStore="
        + parallelRequests
        + " requests of "
        + rangeSize
        + " bytes}";
  }

  public static final class Builder {
    private final Map<String, String> properties = new LinkedHashMap<>();
    private final Map<String, String> hadoopProperties = new LinkedHashMap<>();
    private int parallelRequests = PARALLEL_REQUESTS_DEFAULT;
    private long rangeSize = RANGE_SIZE_DEFAULT;

    private Builder() {}

    /** Ranged requests to object stores in flight at once; 0 for one at a time. */
    public Builder parallelRequests(int requests) {
      io.floe.util.Preconditions.checkArgument(
          requests >= 0, "Invalid object-store parallel-requests: %s (must be >= 0)", requests);
      this.parallelRequests = requests;
      return this;
    }

    /** The most bytes one ranged request to an object store asks for. */
    public Builder rangeSize(long bytes) {
      io.floe.util.Preconditions.checkArgument(
          bytes >= 64 * 1024 && bytes <= Integer.MAX_VALUE,
          "Invalid object-store range-size: %s (must be 64 KiB to 2 GiB)",
          bytes);
      this.rangeSize = bytes;
      return this;
    }

    public Builder s3Endpoint(String endpoint) {
      return property(S3_ENDPOINT, endpoint);
    }

    public Builder region(String region) {
      return property(CLIENT_REGION, region);
    }

    public Builder s3PathStyleAccess(boolean pathStyle) {
      return property(S3_PATH_STYLE_ACCESS, String.valueOf(pathStyle));
    }

    public Builder s3Credentials(String accessKeyId, String secretAccessKey) {
      property(S3_ACCESS_KEY_ID, accessKeyId);
      return property(S3_SECRET_ACCESS_KEY, secretAccessKey);
    }

    /** Any Iceberg FileIO property under Iceberg's name; a null or blank value unsets it. */
    public Builder property(String key, String value) {
      if (value == null || value.isBlank()) {
        properties.remove(key);
      } else {
        properties.put(key, value.trim());
      }
      return this;
    }

    /** A Hadoop property, for local paths read through Hadoop's file system. */
    public Builder hadoopProperty(String key, String value) {
      hadoopProperties.put(key, value);
      return this;
    }

    public StorageSettings build() {
      return new StorageSettings(this);
    }
  }
}
