package io.floe.table;

import io.floe.util.Preconditions;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;

/**
 * Reads data files on object stores ({@code s3://}, {@code gs://}, {@code abfs://} and their
 * variants) with several ranged requests at once: a {@link FileIO} wrapper whose input files'
 * streams ({@link ParallelRangeStream}) answer parquet-java's vectored reads (a row group's column
 * chunk ranges, asked for at once) by splitting each range into pieces of at most {@code rangeSize}
 * bytes fetched concurrently, and fetch a file's footer with one request. Local files, and files of
 * other FileIOs' natively encrypted kind, are read as the wrapped FileIO reads them.
 *
 * <p>Owns the node's pool of {@code requests} reading threads: at most that many requests to object
 * stores are in flight for all loads of the node together. The pieces land straight in the buffer
 * the reader allocated for the range: Parquet's on the heap, as it reads without this; the native
 * reader's excerpts in accounted Arrow memory, filled through one piece-sized array per request in
 * flight. Reading in parallel holds no column data beyond what the reader holds anyway.
 */
public final class ParallelReads implements AutoCloseable {
  private final int requests;
  private final int rangeSize;
  private final ExecutorService pool;

  private ParallelReads(int requests, int rangeSize) {
    this.requests = requests;
    this.rangeSize = rangeSize;
    AtomicInteger n = new AtomicInteger();
    this.pool =
        requests == 0
            ? null
            : new ThreadPoolExecutor(
                requests,
                requests,
                30,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                r -> {
                  Thread t = new Thread(r, "floe-object-store-read-" + n.incrementAndGet());
                  t.setDaemon(true);
                  return t;
                });
    if (pool != null) {
      ((ThreadPoolExecutor) pool).allowCoreThreadTimeOut(true);
    }
  }

  /**
   * Whether {@code stream} answers vectored reads with parallel ranged requests, straight into any
   * buffer it is given (Iceberg's own streams answer them one range after another, into heap
   * buffers only).
   */
  public static boolean readsInParallel(org.apache.iceberg.io.SeekableInputStream stream) {
    return stream instanceof ParallelRangeStream;
  }

  /**
   * @param requests ranged requests in flight at most, for the whole node; 0 leaves reads as the
   *     wrapped FileIO does them (Iceberg reads a vectored read's ranges one request at a time)
   * @param rangeSize the most bytes one request asks for
   */
  public static ParallelReads of(int requests, long rangeSize) {
    Preconditions.checkArgument(
        requests >= 0, "Invalid object-store parallel requests: %s (must be >= 0)", requests);
    Preconditions.checkArgument(
        rangeSize >= 64 * 1024 && rangeSize <= Integer.MAX_VALUE,
        "Invalid object-store range size: %s (must be 64 KiB to 2 GiB)",
        rangeSize);
    return new ParallelReads(requests, (int) rangeSize);
  }

  public int requests() {
    return requests;
  }

  public int rangeSize() {
    return rangeSize;
  }

  /** Object-store schemes, whose files are read in parallel ranges. */
  static final List<String> OBJECT_STORE_SCHEMES =
      List.of("s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs");

  static boolean onObjectStore(String location) {
    String scheme = FloeFileIO.scheme(location);
    return scheme != null && OBJECT_STORE_SCHEMES.contains(scheme.toLowerCase(Locale.ROOT));
  }

  /** {@code io} with its object-store files read in parallel ranges (itself when turned off). */
  public FileIO wrap(FileIO io) {
    return pool == null || io instanceof Wrapped ? io : new Wrapped(io, this);
  }

  /** {@code file} read in parallel ranges when it is on an object store. */
  InputFile wrap(InputFile file) {
    if (pool == null
        || !onObjectStore(file.location())
        || file instanceof org.apache.iceberg.encryption.NativelyEncryptedFile encrypted
            && encrypted.nativeCryptoParameters() != null) {
      return file;
    }
    return new ParallelRangeFile(file, this);
  }

  ExecutorService pool() {
    return pool;
  }

  @Override
  public void close() {
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  @Override
  public String toString() {
    return pool == null
        ? "one request at a time"
        : requests + " requests of up to " + rangeSize + " bytes at once";
  }

  /**
   * The FileIO a slice reads through; it does not own the wrapped FileIO (the table or {@link
   * TableAccess} closes that).
   */
  private static final class Wrapped implements FileIO {
    private final FileIO io;
    private final transient ParallelReads reads;

    Wrapped(FileIO io, ParallelReads reads) {
      this.io = io;
      this.reads = reads;
    }

    @Override
    public InputFile newInputFile(String location) {
      return reads.wrap(io.newInputFile(location));
    }

    @Override
    public InputFile newInputFile(String location, long length) {
      return reads.wrap(io.newInputFile(location, length));
    }

    @Override
    public InputFile newInputFile(org.apache.iceberg.DataFile file) {
      return reads.wrap(io.newInputFile(file));
    }

    @Override
    public InputFile newInputFile(org.apache.iceberg.DeleteFile file) {
      return reads.wrap(io.newInputFile(file));
    }

    @Override
    public InputFile newInputFile(org.apache.iceberg.ManifestFile manifest) {
      return io.newInputFile(manifest);
    }

    @Override
    public OutputFile newOutputFile(String location) {
      return io.newOutputFile(location);
    }

    @Override
    public void deleteFile(String location) {
      io.deleteFile(location);
    }

    @Override
    public java.util.Map<String, String> properties() {
      return io.properties();
    }

    @Override
    public void close() {
      // not the owner of io
    }
  }
}
