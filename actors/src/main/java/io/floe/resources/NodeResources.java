package io.floe.resources;

import io.floe.iceberg.SliceLoader;
import io.floe.iceberg.SlicePlanner;
import io.floe.store.AllocatorReaper;
import io.floe.store.AllocatorTree;
import io.floe.store.SliceStore;
import io.floe.table.CatalogSettings;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.relocated.com.google.common.base.Preconditions;

/**
 * What one data node owns outside its actors: the root allocator (every Arrow byte on the node is
 * accounted under it, capped at the configured limit), the slices it holds, table access, and the
 * threads that plan and decode. Entities receive it through their factories. Closing it closes the
 * root allocator, which fails loudly if any slice memory was not returned.
 */
public final class NodeResources implements AutoCloseable {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(NodeResources.class);
  public static final int LOAD_THREADS_DEFAULT =
      Math.max(1, Runtime.getRuntime().availableProcessors());
  public static final int LOADS_PER_DATASET_DEFAULT = 4;
  public static final java.time.Duration RETIRE_LINGER_DEFAULT = java.time.Duration.ofSeconds(30);

  /** A leaving node serves its moved slices at most this long before it stops Flight. */
  public static final java.time.Duration SHUTDOWN_LINGER_MAX = java.time.Duration.ofSeconds(20);

  private final BufferAllocator allocator;
  private final SliceStore sliceStore = new SliceStore();
  private final AllocatorReaper reaper = new AllocatorReaper();
  private final TableAccess tables;
  private final SliceLoader loader;
  private final SlicePlanner planner;
  private final ExecutorService loadExecutor;
  private final int loadsPerDataset;
  private final java.time.Duration retireLinger;
  private final AtomicInteger retiring = new AtomicInteger();
  private final java.util.concurrent.ScheduledExecutorService timers =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "floe-slice-timers");
            t.setDaemon(true);
            return t;
          });

  /** Null until the node's Flight server is bound; slices load only after that. */
  private final java.util.concurrent.atomic.AtomicReference<String> advertised =
      new java.util.concurrent.atomic.AtomicReference<>();

  private final io.floe.iceberg.SliceLoadListener loadListener;

  private NodeResources(Builder builder) {
    this.loadListener = builder.loadListener;
    this.allocator = io.floe.arrow.NodeAllocation.root(builder.memoryLimitBytes);
    this.tables = new TableAccess(builder.storage, builder.catalogs, builder.locations);
    this.loader = new SliceLoader(allocator, tables, reaper, builder.vectorizedLoads);
    this.planner = new SlicePlanner(builder.sliceTargetBytes);
    this.loadsPerDataset = builder.loadsPerDataset;
    this.retireLinger = builder.retireLinger;
    AtomicInteger threads = new AtomicInteger();
    ThreadFactory factory =
        r -> {
          Thread t = new Thread(r, "floe-load-" + threads.incrementAndGet());
          t.setDaemon(true);
          return t;
        };
    this.loadExecutor = Executors.newFixedThreadPool(builder.loadThreads, factory);
  }

  public static Builder builder() {
    return new Builder();
  }

  public BufferAllocator allocator() {
    return allocator;
  }

  public io.floe.iceberg.SliceLoadListener loadListener() {
    return loadListener;
  }

  public SliceStore sliceStore() {
    return sliceStore;
  }

  public TableAccess tables() {
    return tables;
  }

  public SliceLoader loader() {
    return loader;
  }

  public SlicePlanner planner() {
    return planner;
  }

  /** Runs planning and decoding off the actors' dispatcher; bounded to the load threads. */
  public ExecutorService loadExecutor() {
    return loadExecutor;
  }

  public int loadsPerDataset() {
    return loadsPerDataset;
  }

  /** How long a slice that moved away keeps serving readers that planned against it. */
  public java.time.Duration retireLinger() {
    return retireLinger;
  }

  /**
   * Keeps a moved slice serving for the retire linger (shorter when the node is shutting down, so
   * that it leaves within its grace period), then runs {@code release}.
   */
  public void retire(Runnable release, boolean shuttingDown) {
    java.time.Duration linger =
        shuttingDown && retireLinger.compareTo(SHUTDOWN_LINGER_MAX) > 0
            ? SHUTDOWN_LINGER_MAX
            : retireLinger;
    retiring.incrementAndGet();
    timers.schedule(
        () -> {
          try {
            release.run();
          } finally {
            retiring.decrementAndGet();
          }
        },
        linger.toMillis(),
        java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** Waits until every retired slice has been released, or {@code timeout} passed. */
  public boolean awaitRetired(java.time.Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (retiring.get() > 0 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return retiring.get() == 0;
  }

  /** Timers for slice housekeeping (freeing moved slices after the linger). */
  public java.util.concurrent.ScheduledExecutorService timers() {
    return timers;
  }

  /** Where readers reach this node's Flight server (a URI); known once the server is bound. */
  public String advertisedLocation() {
    String location = advertised.get();
    if (location == null) {
      throw new IllegalStateException("The node's Flight location is not known yet");
    }
    return location;
  }

  public void advertise(String location) {
    advertised.set(location);
  }

  @Override
  public void close() {
    timers.shutdownNow();
    loadExecutor.shutdownNow();
    try {
      loadExecutor.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    sliceStore.slices().forEach(slice -> slice.release());
    if (!reaper.awaitDrained(java.time.Duration.ofSeconds(30))) {
      LOG.warn(
          "Slice memory still held by the transport at shutdown: {} bytes", reaper.pendingBytes());
    }
    reaper.close();
    tables.close();
    if (allocator.getAllocatedMemory() != 0) {
      throw new IllegalStateException(
          "Arrow memory leaked at node shutdown:\n" + AllocatorTree.describe(allocator));
    }
    allocator.close();
  }

  public static final class Builder {
    private long memoryLimitBytes = Long.MAX_VALUE;
    private long sliceTargetBytes = SlicePlanner.SLICE_TARGET_BYTES_DEFAULT;
    private int loadThreads = LOAD_THREADS_DEFAULT;
    private int loadsPerDataset = LOADS_PER_DATASET_DEFAULT;
    private StorageSettings storage = StorageSettings.defaults();
    private CatalogSettings catalogs = CatalogSettings.none();
    private io.floe.table.LocationPolicy locations = io.floe.table.LocationPolicy.any();
    private boolean vectorizedLoads = true;
    private java.time.Duration retireLinger = RETIRE_LINGER_DEFAULT;
    private io.floe.iceberg.SliceLoadListener loadListener = io.floe.iceberg.SliceLoadListener.NONE;

    private Builder() {}

    public Builder memoryLimitBytes(long bytes) {
      Preconditions.checkArgument(bytes > 0, "Invalid memory limit: %s (must be > 0)", bytes);
      this.memoryLimitBytes = bytes;
      return this;
    }

    public Builder sliceTargetBytes(long bytes) {
      Preconditions.checkArgument(bytes > 0, "Invalid slice target bytes: %s (must be > 0)", bytes);
      this.sliceTargetBytes = bytes;
      return this;
    }

    public Builder loadThreads(int threads) {
      Preconditions.checkArgument(threads > 0, "Invalid load threads: %s (must be > 0)", threads);
      this.loadThreads = threads;
      return this;
    }

    public Builder loadsPerDataset(int loads) {
      Preconditions.checkArgument(loads > 0, "Invalid loads per dataset: %s (must be > 0)", loads);
      this.loadsPerDataset = loads;
      return this;
    }

    public Builder retireLinger(java.time.Duration linger) {
      Preconditions.checkArgument(
          !linger.isNegative(), "Invalid retire linger: %s (must be >= 0)", linger);
      this.retireLinger = linger;
      return this;
    }

    public Builder storage(StorageSettings settings) {
      this.storage = settings;
      return this;
    }

    public Builder catalogs(CatalogSettings settings) {
      this.catalogs = settings;
      return this;
    }

    /** Which locations callers may load tables from (catalog tables are not confined). */
    public Builder locations(io.floe.table.LocationPolicy policy) {
      this.locations = policy;
      return this;
    }

    /** Whether slices may be decoded by the vectorized reader where it applies (on by default). */
    public Builder vectorizedLoads(boolean on) {
      this.vectorizedLoads = on;
      return this;
    }

    /** Hears how slice loads went (the node's metrics). */
    public Builder loadListener(io.floe.iceberg.SliceLoadListener listener) {
      this.loadListener = java.util.Objects.requireNonNull(listener, "listener");
      return this;
    }

    public NodeResources build() {
      return new NodeResources(this);
    }
  }
}
