package io.floe.client;

import io.floe.protocol.Actions;
import io.floe.protocol.ClusterViewReply;
import io.floe.protocol.DatasetStatusReply;
import io.floe.protocol.JobRequests;
import io.floe.protocol.JobStatusReply;
import io.floe.protocol.LoadRequest;
import io.floe.protocol.NameRequest;
import io.floe.protocol.ReadRequest;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Result;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A Java reader's handle on a Floe cluster: actions on datasets through any node, and reads that
 * fetch each endpoint from the node its ticket names. Connections to nodes are opened on demand and
 * closed with the client. Server errors surface as {@link FlightRuntimeException} carrying the
 * server's status and description.
 */
public final class FloeClient implements AutoCloseable {
  private static final int FLOW_CONTROL_WINDOW = 32 * 1024 * 1024;

  private final BufferAllocator allocator;
  private final Location entry;
  private final Map<Location, FlightClient> clients = new ConcurrentHashMap<>();

  /** The protocol version each node asked speaks. */
  private final Map<Location, Integer> versions = new ConcurrentHashMap<>();

  private final BearerToken token;
  private final io.netty.handler.ssl.SslContext tls;

  private FloeClient(
      BufferAllocator allocator,
      Location entry,
      BearerToken token,
      io.netty.handler.ssl.SslContext tls) {
    this.allocator = allocator;
    this.entry = entry;
    this.token = token;
    this.tls = tls;
  }

  /** A client with options: a token, the CAs to trust for grpc+tls, a client certificate. */
  public static Builder builder(BufferAllocator allocator, Location entry) {
    return new Builder(allocator, entry);
  }

  /** Options of a {@link FloeClient}; {@link #build} checks the files they name. */
  public static final class Builder {
    private final BufferAllocator allocator;
    private final Location entry;
    private String token;
    private java.nio.file.Path tokenFile;
    private java.nio.file.Path trustedCertificates;
    private java.nio.file.Path clientCertificate;
    private java.nio.file.Path clientKey;

    private Builder(BufferAllocator allocator, Location entry) {
      this.allocator = allocator;
      this.entry = entry;
    }

    /** The bearer token sent with every call, to every node. */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /**
     * Instead of {@link #token}, a file holding it, read again whenever its modification time or
     * size changes: a pod's projected ServiceAccount token, which the kubelet renews before it
     * expires (docs/security.md, "Kubernetes callers"). {@link #build} reads it once, so a missing
     * or empty file fails there.
     */
    public Builder tokenFile(java.nio.file.Path tokenFile) {
      this.tokenFile = tokenFile;
      return this;
    }

    /** A PEM file of the CAs that sign the nodes' certificates (default: the JDK's CAs). */
    public Builder trustedCertificates(java.nio.file.Path caPem) {
      this.trustedCertificates = caPem;
      return this;
    }

    /** For nodes that ask for client certificates (mutual TLS): a PEM chain and PKCS#8 key. */
    public Builder clientCertificate(java.nio.file.Path certPem, java.nio.file.Path keyPem) {
      this.clientCertificate = certPem;
      this.clientKey = keyPem;
      return this;
    }

    /**
     * @throws IllegalArgumentException if both a token and a token file are set, the token is
     *     unusable (empty, with whitespace), the token file cannot be read, or a TLS file is
     *     unusable
     */
    public FloeClient build() {
      if (token != null && tokenFile != null) {
        throw new IllegalArgumentException(
            "A token and a token file exclude each other: set one (token file " + tokenFile + ")");
      }
      BearerToken bearer =
          token != null
              ? BearerToken.of(token)
              : tokenFile != null ? BearerToken.from(tokenFile) : null;
      io.netty.handler.ssl.SslContext tls = null;
      if (trustedCertificates != null || clientCertificate != null) {
        try {
          io.netty.handler.ssl.SslContextBuilder ssl =
              io.grpc.netty.GrpcSslContexts.configure(
                  io.netty.handler.ssl.SslContextBuilder.forClient(),
                  io.netty.handler.ssl.SslProvider.JDK);
          if (trustedCertificates != null) {
            ssl.trustManager(trustedCertificates.toFile());
          }
          if (clientCertificate != null) {
            ssl.keyManager(clientCertificate.toFile(), clientKey.toFile());
          }
          tls = ssl.build();
        } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
          throw new IllegalArgumentException("Unusable TLS files: " + e.getMessage(), e);
        }
      }
      return new FloeClient(allocator, entry, bearer, tls);
    }
  }

  /**
   * A client that plans through {@code entry}, sending no token (for nodes that let anonymous
   * callers in); the allocator receives the batches read.
   */
  public static FloeClient connect(BufferAllocator allocator, Location entry) {
    return new FloeClient(allocator, entry, null, null);
  }

  /** A client that sends {@code token} as its bearer token with every call, to every node. */
  public static FloeClient connect(BufferAllocator allocator, Location entry, String token) {
    return builder(allocator, entry).token(token).build();
  }

  private FlightClient client(Location location) {
    return clients.computeIfAbsent(location, this::open);
  }

  FlightClient flight(Location location) {
    return client(location);
  }

  /** Nodes to plan through: the entry node first, then every node seen in a plan. */
  List<Location> entries() {
    List<Location> entries = new java.util.ArrayList<>();
    entries.add(entry);
    for (Location known : clients.keySet()) {
      if (!known.equals(entry)) {
        entries.add(known);
      }
    }
    return entries;
  }

  BufferAllocator allocator() {
    return allocator;
  }

  Location locationOf(FlightEndpoint endpoint) {
    return locationOf(endpoint, 0);
  }

  /**
   * The {@code index}-th location of an endpoint (a slice's holder first, then the nodes holding
   * its other copies), the last one past its end, or the entry node when it names none.
   */
  Location locationOf(FlightEndpoint endpoint, int index) {
    List<Location> locations = endpoint.getLocations();
    return locations.isEmpty() ? entry : locations.get(Math.min(index, locations.size() - 1));
  }

  /**
   * gRPC's default 1 MiB receive window makes a multi-megabyte batch wait for several window
   * updates per message; a larger window lets one stream run at memory speed.
   */
  private FlightClient open(Location location) {
    java.net.URI uri = location.getUri();
    boolean secure = "grpc+tls".equals(uri.getScheme());
    if (!secure && !"grpc+tcp".equals(uri.getScheme()) && !"grpc".equals(uri.getScheme())) {
      FlightClient.Builder builder = FlightClient.builder(allocator, location);
      if (token != null) {
        builder.intercept(token);
      }
      return builder.build();
    }
    io.grpc.netty.NettyChannelBuilder builder =
        io.grpc.netty.NettyChannelBuilder.forAddress(uri.getHost(), uri.getPort());
    if (!secure) {
      builder.usePlaintext();
    } else if (tls != null) {
      builder.sslContext(tls);
    } else {
      builder.useTransportSecurity();
    }
    builder
        .directExecutor()
        .flowControlWindow(FLOW_CONTROL_WINDOW)
        .maxInboundMessageSize(Integer.MAX_VALUE);
    if (token != null) {
      builder.intercept(token);
    }
    io.grpc.ManagedChannel channel = builder.build();
    return org.apache.arrow.flight.FlightGrpcUtils.createFlightClient(allocator, channel);
  }

  /** Loads a dataset; answers its status (READY or FAILED with {@code wait}). */
  public DatasetStatusReply load(LoadRequest request) {
    return DatasetStatusReply.parse(reply(entry, Actions.LOAD, request.toJson()));
  }

  /**
   * Moves a dataset to its table's newest snapshot, loading only the slices that changed; with
   * {@code wait} it answers once the new layout serves.
   */
  public DatasetStatusReply refresh(String dataset, boolean wait) {
    return DatasetStatusReply.parse(
        reply(entry, Actions.REFRESH, new io.floe.protocol.RefreshRequest(dataset, wait).toJson()));
  }

  /** A dataset's status; ABSENT for a name no dataset has. */
  public DatasetStatusReply status(String dataset) {
    return DatasetStatusReply.parse(
        reply(entry, Actions.STATUS, new NameRequest(dataset).toJson()));
  }

  /** Drops a dataset, freeing its memory; answers the status it had. */
  public DatasetStatusReply drop(String dataset) {
    return DatasetStatusReply.parse(reply(entry, Actions.DROP, new NameRequest(dataset).toJson()));
  }

  /** Every loaded dataset's status, by name. */
  public List<DatasetStatusReply> list() {
    return DatasetStatusReply.parseList(reply(entry, Actions.LIST, new byte[0]));
  }

  /**
   * Waits until the entry node sees exactly {@code size} members Up and none unreachable.
   *
   * @throws IllegalStateException if that does not happen within {@code timeout}
   */
  public void awaitMembers(int size, java.time.Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        ClusterViewReply view = cluster();
        if (view.membersUp() == size && view.unreachable().isEmpty()) {
          return;
        }
      } catch (RuntimeException e) {
        // the node is starting, or the cluster is changing
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException(
        "The cluster did not reach " + size + " members within " + timeout);
  }

  /**
   * Registers a training job, or answers its status when it is registered with the same settings
   * (so every rank may register). Other settings under the same id fail with ALREADY_EXISTS.
   */
  public JobStatusReply registerJob(JobOptions options) {
    return JobStatusReply.parse(jobReply(Actions.REGISTER_JOB, options.toJson()));
  }

  /** A job's status with its counters; NOT_FOUND for a job that is not registered. */
  public JobStatusReply jobStatus(String job) {
    return JobStatusReply.parse(
        jobReply(Actions.JOB_STATUS, new JobRequests.JobStatusRequest(job, null).toJson()));
  }

  /**
   * A job's status with {@code epoch}'s layout and batch count: an epoch not begun yet begins on
   * the dataset's newest layout (after a refresh), unless the job pins its layout.
   */
  public JobStatusReply jobStatus(String job, int epoch) {
    return JobStatusReply.parse(
        jobReply(Actions.JOB_STATUS, new JobRequests.JobStatusRequest(job, (long) epoch).toJson()));
  }

  /** Every registered job's status (without an epoch asked for), by id. */
  public List<JobStatusReply> listJobs() {
    return JobStatusReply.parseList(jobReply(Actions.LIST_JOBS, new byte[0]));
  }

  /** Drops a job; answers the status it had, with {@link JobStatusReply#dropped()} set. */
  public JobStatusReply dropJob(String job) {
    return JobStatusReply.parse(jobReply(Actions.DROP_JOB, new JobRequests.JobName(job).toJson()));
  }

  /**
   * Reads rank {@code rank} of {@code worldSize} of a deterministic epoch: its share of global
   * batches {@code batchFrom, batchFrom + batchStep, ...} up to the end of the epoch. Registers the
   * job first (idempotent). Close the reader when done, and every batch it handed out.
   */
  public JobReader readJob(
      JobOptions options, int epoch, int worldSize, int rank, long batchFrom, long batchStep) {
    return jobReader(options)
        .epoch(epoch)
        .worldSize(worldSize)
        .rank(rank)
        .batchFrom(batchFrom)
        .batchStep(batchStep)
        .open();
  }

  /**
   * As {@link #readJob(JobOptions, int, int, int, long, long)}, stopping before {@code batchTo}.
   */
  public JobReader readJob(
      JobOptions options,
      int epoch,
      int worldSize,
      int rank,
      long batchFrom,
      long batchTo,
      long batchStep) {
    return jobReader(options)
        .epoch(epoch)
        .worldSize(worldSize)
        .rank(rank)
        .batchFrom(batchFrom)
        .batchTo(batchTo)
        .batchStep(batchStep)
        .open();
  }

  /** A deterministic reader with every setting at hand (chunk size, patience). */
  public JobReader.Builder jobReader(JobOptions options) {
    return new JobReader.Builder(this, options);
  }

  /**
   * Leases, reads and hands out whole global batches of a dynamic epoch until every batch of it is
   * acknowledged, as worker {@code worker} (a name unique among the job's workers).
   */
  public DynamicJobReader readDynamic(JobOptions options, int epoch, String worker) {
    return new DynamicJobReader(this, options, epoch, worker, JobReader.PATIENCE_DEFAULT);
  }

  /** As {@link #readDynamic(JobOptions, int, String)} under a worker name made up for this JVM. */
  public DynamicJobReader readDynamic(JobOptions options, int epoch) {
    return readDynamic(options, epoch, DynamicJobReader.defaultWorker());
  }

  /**
   * The body of a job action's answer, through the entry node or through the other known nodes when
   * the entry node cannot be reached: a job lives on whichever node sharding put it, and every node
   * forwards.
   */
  byte[] jobReply(String type, byte[] body) {
    FlightRuntimeException unreachable = null;
    for (Location node : entries()) {
      try {
        return reply(node, type, body);
      } catch (FlightRuntimeException e) {
        if (e.status().code() != FlightStatusCode.UNAVAILABLE) {
          throw e;
        }
        unreachable = e;
      }
    }
    throw unreachable;
  }

  /** The cluster's members as the entry node sees them. */
  public ClusterViewReply cluster() {
    return ClusterViewReply.parse(reply(entry, Actions.CLUSTER, new byte[0]));
  }

  /**
   * Whether the node at {@code node} speaks protocol {@code version} or later: asked once ({@code
   * cluster}) and remembered, so that a request carries a later version's fields only to nodes that
   * read them.
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException when the node cannot be asked, as a
   *     request to it would
   */
  boolean speaks(Location node, int version) {
    Integer known = versions.get(node);
    if (known == null) {
      known = ClusterViewReply.parse(reply(node, Actions.CLUSTER, new byte[0])).protocolVersion();
      versions.put(node, known);
    }
    return known >= version;
  }

  /** The body of an action's one result. */
  private byte[] reply(Location node, String type, byte[] body) {
    Iterator<Result> results = client(node).doAction(new Action(type, body));
    if (!results.hasNext()) {
      throw new IllegalStateException("Action '" + type + "' answered nothing");
    }
    byte[] answer = results.next().getBody();
    results.forEachRemaining(r -> {});
    return answer;
  }

  /** Plans shard {@code index} of {@code count} of a dataset. */
  public FlightInfo plan(String dataset, int index, int count) {
    ReadRequest request = new ReadRequest(dataset, index, count);
    return client(entry).getInfo(FlightDescriptor.command(request.toJson()));
  }

  /**
   * Reads shard {@code index} of {@code count} so that every row reaches {@code batches} exactly
   * once, planning again when a node leaves, fails or gives up a slice mid-read; gives up after
   * {@code patience} without progress on one endpoint. Answers the rows read.
   */
  public long readShard(
      String dataset,
      int index,
      int count,
      java.time.Duration patience,
      Consumer<VectorSchemaRoot> batches) {
    return new ShardReader(this, new ReadRequest(dataset, index, count), patience).read(batches);
  }

  /**
   * Reads every endpoint of a plan in order, handing each batch to {@code batches}; the root is
   * only valid during the call. Answers the rows read.
   */
  public long read(FlightInfo info, Consumer<VectorSchemaRoot> batches) {
    long rows = 0;
    for (FlightEndpoint endpoint : info.getEndpoints()) {
      Location location =
          endpoint.getLocations().isEmpty() ? entry : endpoint.getLocations().get(0);
      try (FlightStream stream = client(location).getStream(endpoint.getTicket())) {
        while (stream.next()) {
          VectorSchemaRoot root = stream.getRoot();
          rows += root.getRowCount();
          batches.accept(root);
        }
      } catch (Exception e) {
        if (e instanceof RuntimeException) {
          throw (RuntimeException) e;
        }
        throw new IllegalStateException("Failed to close stream", e);
      }
    }
    return rows;
  }

  @Override
  public void close() throws InterruptedException {
    for (FlightClient client : clients.values()) {
      client.close();
    }
    clients.clear();
  }
}
