package io.floe.resources;

import io.floe.iceberg.SliceLoader;
import io.floe.iceberg.SlicePlanner;
import io.floe.store.AllocatorReaper;
import io.floe.store.AllocatorTree;
import io.floe.store.SliceStore;
import io.floe.table.CatalogSettings;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.util.Preconditions;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What one data node owns outside its actors: the root allocator (every Arrow byte on the node is
 * accounted under it, capped at the configured limit), the slices it holds, table access, and the
 * threads that plan and decode. Entities get the parts they use (DatasetPlanning, SliceHosting)
 * through their sharding factories. Closing it closes the root allocator, which fails loudly if any
 * slice memory was not returned.
 */
public final class NodeResources implements AutoCloseable {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(NodeResources.class);

  private final BufferAllocator allocator;
  private final SliceStore sliceStore = new SliceStore();
  private final AllocatorReaper reaper = new AllocatorReaper();
  private final TableAccess tables;
  private final ExecutorService loadExecutor;
  private final Retirement retirement;
  private final AdvertisedLocation location = new AdvertisedLocation();
  private final DatasetPlanning planning;
  private final SliceHosting hosting;

  /** The native reader's excerpts of split files, or null when it does not read them. */
  private final io.floe.iceberg.RowGroupExcerpts excerpts;

  private NodeResources(Builder builder) {
    this.allocator = io.floe.arrow.NodeAllocation.root(builder.memoryLimitBytes);
    this.tables = new TableAccess(builder.storage, builder.catalogs, builder.locations);
    this.retirement = new Retirement(builder.retireLinger);
    AtomicInteger threads = new AtomicInteger();
    ThreadFactory factory =
        r -> {
          Thread t = new Thread(r, "floe-load-" + threads.incrementAndGet());
          t.setDaemon(true);
          return t;
        };
    this.loadExecutor = Executors.newFixedThreadPool(builder.loadThreads, factory);
    this.planning =
        new DatasetPlanning(
            tables,
            new SlicePlanner(builder.sliceTargetBytes),
            loadExecutor,
            builder.loadsPerDataset,
            builder.retireLinger,
            new ClusterMemory(
                allocator,
                builder.loadThreads,
                builder.admissionQueueLength,
                builder.admissionWaitTimeout));
    this.excerpts = builder.excerpts();
    SliceLoader loader = new SliceLoader(allocator, tables, reaper, builder.decoders(), excerpts);
    // The native library (76 MB unpacked from its jar, about a tenth of a first load's CPU) loads
    // on a load thread now rather than in the first load.
    loadExecutor.execute(loader::prepare);
    this.hosting =
        new SliceHosting(
            loader, loadExecutor, sliceStore, location, retirement, builder.loadListener);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The node's root allocator: every Arrow byte it holds, capped at its memory limit. */
  public BufferAllocator allocator() {
    return allocator;
  }

  /** The slices this node holds, which its Flight server streams from. */
  public SliceStore sliceStore() {
    return sliceStore;
  }

  /** What the node's dataset entities are handed. */
  public DatasetPlanning datasetPlanning() {
    return planning;
  }

  /** What the node's slice entities are handed. */
  public SliceHosting sliceHosting() {
    return hosting;
  }

  /** Tells slices where readers reach this node, once its Flight server is bound. */
  public void advertise(String uri) {
    location.set(uri);
  }

  public boolean awaitRetired(java.time.Duration timeout) {
    return retirement.awaitRetired(timeout);
  }

  @Override
  public void close() {
    retirement.close();
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
    if (excerpts != null) {
      try {
        excerpts.close();
      } catch (java.io.UncheckedIOException e) {
        LOG.warn("Could not remove the load's scratch directory: {}", e.getMessage());
      }
    }
    tables.close();
    if (allocator.getAllocatedMemory() != 0) {
      throw new IllegalStateException(
          "Arrow memory leaked at node shutdown:\n" + AllocatorTree.describe(allocator));
    }
    allocator.close();
  }

  public static final class Builder {
    // The node's settings (FloeSettings, from application.conf) set every one; there are no
    // defaults here to drift from the configuration's.
    private long memoryLimitBytes;
    private long sliceTargetBytes;
    private int loadThreads;
    private int loadsPerDataset;
    private StorageSettings storage = StorageSettings.defaults();
    private CatalogSettings catalogs = CatalogSettings.none();
    private io.floe.table.LocationPolicy locations = io.floe.table.LocationPolicy.any();
    private boolean vectorizedLoads = true;
    private boolean nativeLoads = false;
    private java.nio.file.Path loadScratchDir;
    private java.time.Duration retireLinger;
    private int admissionQueueLength = -1;
    private java.time.Duration admissionWaitTimeout;
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

    /** How many loads may wait for memory at once (more are refused); 0: none waits. */
    public Builder admissionQueueLength(int loads) {
      Preconditions.checkArgument(
          loads >= 0, "Invalid admission queue length: %s (must be >= 0)", loads);
      this.admissionQueueLength = loads;
      return this;
    }

    /** How long a load waits for memory that loads in flight reserved before it is refused. */
    public Builder admissionWaitTimeout(java.time.Duration timeout) {
      Preconditions.checkArgument(
          !timeout.isNegative(), "Invalid admission wait timeout: %s (must be >= 0)", timeout);
      this.admissionWaitTimeout = timeout;
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

    /**
     * Whether whole local files may be decoded by Arrow's C++ Parquet reader where it applies (off
     * unless set; the node's configuration turns it on). Only with {@link #vectorizedLoads}.
     */
    public Builder nativeLoads(boolean on) {
      this.nativeLoads = on;
      return this;
    }

    /**
     * Where the native reader's excerpts of files split across slices or on object stores are
     * written (a directory of the node's own is made in it); unset, such files go to the vectorized
     * reader.
     */
    public Builder loadScratchDir(java.nio.file.Path directory) {
      this.loadScratchDir = directory;
      return this;
    }

    private io.floe.iceberg.RowGroupExcerpts excerpts() {
      if (decoders() != io.floe.iceberg.SliceLoader.Decoders.NATIVE || loadScratchDir == null) {
        return null;
      }
      try {
        return io.floe.iceberg.RowGroupExcerpts.in(loadScratchDir);
      } catch (java.io.UncheckedIOException e) {
        LOG.warn(
            "{}: files split across slices are decoded by the vectorized reader (floe.load.scratch-dir)",
            e.getMessage());
        return null;
      }
    }

    private io.floe.iceberg.SliceLoader.Decoders decoders() {
      if (!vectorizedLoads) {
        return io.floe.iceberg.SliceLoader.Decoders.GENERIC;
      }
      return nativeLoads
          ? io.floe.iceberg.SliceLoader.Decoders.NATIVE
          : io.floe.iceberg.SliceLoader.Decoders.VECTORIZED;
    }

    /** Hears how slice loads went (the node's metrics). */
    public Builder loadListener(io.floe.iceberg.SliceLoadListener listener) {
      this.loadListener = java.util.Objects.requireNonNull(listener, "listener");
      return this;
    }

    public NodeResources build() {
      Preconditions.checkState(
          memoryLimitBytes > 0
              && sliceTargetBytes > 0
              && loadThreads > 0
              && loadsPerDataset > 0
              && retireLinger != null
              && admissionQueueLength >= 0
              && admissionWaitTimeout != null,
          "Node resources need the memory limit, slice target, load threads, loads per dataset,"
              + " retire linger and the admission queue's length and wait timeout");
      return new NodeResources(this);
    }
  }
}
