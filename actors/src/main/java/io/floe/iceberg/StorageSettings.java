package io.floe.iceberg;

import com.typesafe.config.Config;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;

/**
 * Where and how Floe reads table files: plain paths and {@code file:} need nothing; {@code s3a://}
 * goes through Hadoop S3A with an optional endpoint (for S3-compatible stores), path-style access,
 * and static credentials. Without static credentials S3A uses the standard AWS provider chain.
 * Secrets never appear in {@link #toString()}.
 */
public final class StorageSettings {
  public static final String S3_ENDPOINT = "s3.endpoint";
  public static final String S3_REGION = "s3.region";
  public static final String S3_REGION_DEFAULT = "us-east-1";
  public static final String S3_PATH_STYLE = "s3.path-style-access";
  public static final boolean S3_PATH_STYLE_DEFAULT = false;
  public static final String S3_ACCESS_KEY = "s3.access-key";
  public static final String S3_SECRET_KEY = "s3.secret-key";
  public static final String HADOOP = "hadoop";

  private final Optional<String> s3Endpoint;
  private final String s3Region;
  private final boolean s3PathStyleAccess;
  private final Optional<String> s3AccessKey;
  private final Optional<String> s3SecretKey;
  private final Map<String, String> hadoopProperties;

  private StorageSettings(Builder builder) {
    this.s3Endpoint = Optional.ofNullable(builder.s3Endpoint);
    this.s3Region = builder.s3Region;
    this.s3PathStyleAccess = builder.s3PathStyleAccess;
    this.s3AccessKey = Optional.ofNullable(builder.s3AccessKey);
    this.s3SecretKey = Optional.ofNullable(builder.s3SecretKey);
    this.hadoopProperties = Map.copyOf(builder.hadoopProperties);
  }

  public static StorageSettings defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Reads the {@code floe.storage} block; blank strings count as unset. */
  public static StorageSettings fromConfig(Config config) {
    Builder builder = builder();
    builder.s3Endpoint(optional(config, S3_ENDPOINT));
    builder.s3Region(optional(config, S3_REGION));
    if (config.hasPath(S3_PATH_STYLE)) {
      builder.s3PathStyleAccess(config.getBoolean(S3_PATH_STYLE));
    }
    builder.s3Credentials(optional(config, S3_ACCESS_KEY), optional(config, S3_SECRET_KEY));
    if (config.hasPath(HADOOP)) {
      config
          .getConfig(HADOOP)
          .entrySet()
          .forEach(e -> builder.hadoopProperty(e.getKey(), e.getValue().unwrapped().toString()));
    }
    return builder.build();
  }

  private static String optional(Config config, String path) {
    if (!config.hasPath(path)) {
      return null;
    }
    String value = config.getString(path).trim();
    return value.isEmpty() ? null : value;
  }

  public Optional<String> s3Endpoint() {
    return s3Endpoint;
  }

  public boolean hasStaticCredentials() {
    return s3AccessKey.isPresent() && s3SecretKey.isPresent();
  }

  /** The Hadoop configuration S3A and Iceberg's HadoopFileIO read with. */
  public Configuration toHadoopConfiguration() {
    Configuration conf = new Configuration(false);
    conf.set("fs.s3a.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem");
    conf.set("fs.s3a.endpoint.region", s3Region);
    s3Endpoint.ifPresent(
        endpoint -> {
          conf.set("fs.s3a.endpoint", endpoint);
          conf.setBoolean("fs.s3a.connection.ssl.enabled", endpoint.startsWith("https"));
        });
    conf.setBoolean("fs.s3a.path.style.access", s3PathStyleAccess);
    if (hasStaticCredentials()) {
      conf.set(
          "fs.s3a.aws.credentials.provider",
          "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
      conf.set("fs.s3a.access.key", s3AccessKey.get());
      conf.set("fs.s3a.secret.key", s3SecretKey.get());
    }
    hadoopProperties.forEach(conf::set);
    return conf;
  }

  @Override
  public String toString() {
    return "StorageSettings{s3Endpoint="
        + s3Endpoint.orElse("<aws default>")
        + ", s3Region="
        + s3Region
        + ", pathStyle="
        + s3PathStyleAccess
        + ", credentials="
        + (hasStaticCredentials() ? "static (hidden)" : "aws default chain")
        + ", hadoopProperties="
        + hadoopProperties.keySet()
        + "}";
  }

  public static final class Builder {
    private String s3Endpoint;
    private String s3Region = S3_REGION_DEFAULT;
    private boolean s3PathStyleAccess = S3_PATH_STYLE_DEFAULT;
    private String s3AccessKey;
    private String s3SecretKey;
    private final Map<String, String> hadoopProperties = new LinkedHashMap<>();

    private Builder() {}

    public Builder s3Endpoint(String endpoint) {
      this.s3Endpoint = endpoint;
      return this;
    }

    public Builder s3Region(String region) {
      if (region != null) {
        this.s3Region = region;
      }
      return this;
    }

    public Builder s3PathStyleAccess(boolean pathStyle) {
      this.s3PathStyleAccess = pathStyle;
      return this;
    }

    public Builder s3Credentials(String accessKey, String secretKey) {
      this.s3AccessKey = accessKey;
      this.s3SecretKey = secretKey;
      return this;
    }

    /** Any further Hadoop property (fs.s3a.* tuning and the like). */
    public Builder hadoopProperty(String key, String value) {
      hadoopProperties.put(key, value);
      return this;
    }

    public StorageSettings build() {
      return new StorageSettings(this);
    }
  }
}
