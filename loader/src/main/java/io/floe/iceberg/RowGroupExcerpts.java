package io.floe.iceberg;

import io.floe.table.ParallelReads;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.mapping.MappedField;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.types.Types;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

/**
 * Gives Arrow's C++ Parquet reader the row groups of a file that one slice holds: the JNI scanner
 * reads whole files only, so the slice's row groups, with only the columns it serves, are copied as
 * they are (compressed pages, no decoding) into a small Parquet file of their own in a scratch
 * directory, which the native reader then decodes whole and which is deleted straight after.
 *
 * <p>A file task's row groups are those whose midpoint lies in its byte range, the rule Parquet's
 * own range filter applies for Iceberg's readers, so a slice's rows are the same whichever reader
 * decodes it. Footers are parsed once per node ({@link ParquetFooters}), not once per slice.
 */
public final class RowGroupExcerpts implements AutoCloseable {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(RowGroupExcerpts.class);

  /** Arrow's schema in a file's metadata names every column; an excerpt has only some. */
  private static final String ARROW_SCHEMA = "ARROW:schema";

  private final Path directory;
  private final ParquetFooters footers = new ParquetFooters();
  private final AtomicLong written = new AtomicLong();
  private final AtomicBoolean warned = new AtomicBoolean();

  /** Held open, and locked, until {@link #close}. */
  private final FileChannel lock;

  private RowGroupExcerpts(Path directory, FileChannel lock) {
    this.directory = directory;
    this.lock = lock;
  }

  private static final String PREFIX = "floe-excerpts-";

  /** A lock held on it for as long as a node uses its directory. */
  private static final String LOCK = ".lock";

  /** A directory without a lock this old was left by a node killed as it made it. */
  private static final Duration UNLOCKED_GRACE = Duration.ofMinutes(1);

  /**
   * Excerpts written under a new directory inside {@code parent} (created if need be), locked while
   * in use and removed with what is left in it by {@link #close}. Directories in {@code parent}
   * that killed nodes left are removed first: those whose lock nobody holds (a lock dies with its
   * process, whichever container or PID namespace it ran in).
   *
   * @throws UncheckedIOException when the directory cannot be made
   */
  public static RowGroupExcerpts in(Path parent) {
    try {
      Files.createDirectories(parent);
      removeAbandoned(parent);
      Path directory = Files.createTempDirectory(parent, PREFIX);
      FileChannel lock =
          FileChannel.open(
              directory.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      lock.lock();
      return new RowGroupExcerpts(directory, lock);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot make a scratch directory in " + parent, e);
    }
  }

  private static void removeAbandoned(Path parent) throws IOException {
    try (var entries = Files.newDirectoryStream(parent, PREFIX + "*")) {
      for (Path dir : entries) {
        try {
          if (abandoned(dir)) {
            removeWithFiles(dir);
            LOG.info("Removed {}, left by a node that stopped without removing it", dir);
          }
        } catch (IOException e) {
          LOG.warn("Could not remove {}, left by a node that stopped: {}", dir, e.toString());
        }
      }
    }
  }

  /** Whether no node uses {@code dir}: its lock can be taken, or it has none and is old. */
  private static boolean abandoned(Path dir) throws IOException {
    Path lockFile = dir.resolve(LOCK);
    if (!Files.exists(lockFile)) {
      Instant made = Files.getLastModifiedTime(dir).toInstant();
      return made.isBefore(Instant.now().minus(UNLOCKED_GRACE));
    }
    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
      FileLock taken = channel.tryLock();
      if (taken == null) {
        return false; // another process holds it
      }
      taken.release();
      return true;
    } catch (OverlappingFileLockException e) {
      return false; // a node in this JVM holds it
    }
  }

  private static void removeWithFiles(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return; // removed already
    }
    try (var left = Files.list(dir)) {
      for (Path path : (Iterable<Path>) left::iterator) {
        Files.deleteIfExists(path);
      }
    }
    Files.deleteIfExists(dir);
  }

  Path directory() {
    return directory;
  }

  /** The excerpts in the directory now (each is deleted once decoded). */
  long onDisk() {
    try (var files = Files.list(directory)) {
      return files.filter(path -> !path.getFileName().toString().equals(LOCK)).count();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot list " + directory, e);
    }
  }

  /** One excerpt on disk; closing it deletes the file. */
  record Excerpt(Path path, long rows) implements AutoCloseable {
    /** Deletes the file; a failure is logged, since the rows it gave are good. */
    @Override
    public void close() {
      try {
        Files.deleteIfExists(path);
      } catch (IOException e) {
        LOG.warn("Could not delete the excerpt {}: {}", path, e.toString());
      }
    }
  }

  /** The scratch directory could not take an excerpt: the run goes to the vectorized reader. */
  static final class ScratchUnavailable extends UncheckedIOException {
    ScratchUnavailable(String message, IOException cause) {
      super(message, cause);
    }
  }

  /** A local output file that remembers its stream, so that a failed write can close it. */
  private static final class Output extends LocalOutputFile {
    private PositionOutputStream stream;

    Output(Path path) {
      super(path);
    }

    @Override
    public PositionOutputStream create(long blockSize) throws IOException {
      stream = super.create(blockSize);
      return stream;
    }

    @Override
    public PositionOutputStream createOrOverwrite(long blockSize) throws IOException {
      stream = super.createOrOverwrite(blockSize);
      return stream;
    }

    /** Closes the stream if one was made (an aborted writer leaves it open). */
    void closeQuietly(Throwable failure) {
      if (stream != null) {
        try {
          stream.close();
        } catch (IOException | RuntimeException e) {
          failure.addSuppressed(e);
        }
      }
    }
  }

  /**
   * The row groups of a run of one file's tasks, with the top-level columns of {@code requested}
   * that the file holds (by field id, or through {@code nameMappingJson} for a file without ids),
   * as a Parquet file of their own.
   *
   * @throws UnsupportedOperationException when the file holds none of the requested columns
   * @throws UncheckedIOException when the file cannot be read or the excerpt written
   */
  Excerpt write(
      FileIO io,
      List<FileScanTask> run,
      Schema requested,
      String nameMappingJson,
      BufferAllocator allocator) {
    FileScanTask first = run.get(0);
    String location = first.file().location();
    ParquetFooters.Footer footer = footers.footer(io, location, first.file().fileSizeInBytes());
    List<BlockMetaData> blocks = rowGroups(footer, run);
    ParquetMetadata metadata = footer.metadata();
    MessageType projected =
        project(metadata.getFileMetaData().getSchema(), requested, nameMappingJson, location);
    Map<String, String> keyValues = new HashMap<>(metadata.getFileMetaData().getKeyValueMetaData());
    keyValues.remove(ARROW_SCHEMA);
    Path path = directory.resolve("excerpt-" + written.incrementAndGet() + ".parquet");
    long rows = blocks.stream().mapToLong(BlockMetaData::getRowCount).sum();
    Output output = new Output(path);
    try {
      ParquetFileWriter writer =
          new ParquetFileWriter(output, projected, ParquetFileWriter.Mode.CREATE, 0, 0);
      writer.start();
      try (SeekableInputStream from =
          source(io, location, first.file().fileSizeInBytes(), blocks, projected, allocator)) {
        writer.appendRowGroups(from, blocks, true);
      }
      writer.end(keyValues);
      return new Excerpt(path, rows);
    } catch (IOException | RuntimeException e) {
      output.closeQuietly(e);
      try {
        Files.deleteIfExists(path);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      if (e instanceof IOException failed && scratchFailed(failed)) {
        if (!warned.getAndSet(true)) {
          // The scratch directory is the operator's to fix; the load goes on vectorized.
          LOG.warn(
              "Cannot write an excerpt of {} to {} ({}): such files are decoded by the vectorized"
                  + " reader until it can (floe.load.scratch-dir)",
              location,
              directory,
              failed.toString());
        }
        throw new ScratchUnavailable("Writing an excerpt of " + location, failed);
      }
      if (e instanceof IOException failed) {
        throw new UncheckedIOException("Copying row groups of " + location, failed);
      }
      throw (RuntimeException) e;
    }
  }

  /**
   * The file's bytes: a local file straight from the file system once the FileIO has admitted its
   * location (Hadoop's local file system reads through a checksumming layer); from an object store
   * the projected column chunks of {@code blocks}, fetched at once into {@code allocator} by
   * parallel ranged requests where the node reads object stores so, else read in turn.
   */
  private static SeekableInputStream source(
      FileIO io,
      String location,
      long length,
      List<BlockMetaData> blocks,
      MessageType projected,
      BufferAllocator allocator)
      throws IOException {
    InputFile admitted = io.newInputFile(location, length);
    Optional<Path> local = NativeTaskReader.localPath(location);
    if (local.isPresent()) {
      return localStream(local.get());
    }
    try (org.apache.iceberg.io.SeekableInputStream stream = admitted.newStream()) {
      if (ParallelReads.readsInParallel(stream) && stream instanceof RangeReadable ranges) {
        return FetchedRanges.fetch(ranges, location, chunkRanges(blocks, projected), allocator);
      }
    }
    return new ParquetInput(admitted).newStream();
  }

  /** The biggest run of adjacent column chunks fetched as one range. */
  private static final long MAX_RANGE = 64L << 20;

  /**
   * The byte ranges ({offset, length}) of the projected columns' chunks in {@code blocks}, in file
   * order, adjacent chunks joined up to {@link #MAX_RANGE}.
   */
  static List<long[]> chunkRanges(List<BlockMetaData> blocks, MessageType projected) {
    List<long[]> chunks = new ArrayList<>();
    for (BlockMetaData block : blocks) {
      for (ColumnChunkMetaData column : block.getColumns()) {
        if (projected.containsPath(column.getPath().toArray())) {
          chunks.add(new long[] {column.getStartingPos(), column.getTotalSize()});
        }
      }
    }
    chunks.sort(Comparator.comparingLong(range -> range[0]));
    List<long[]> joined = new ArrayList<>();
    for (long[] chunk : chunks) {
      long[] last = joined.isEmpty() ? null : joined.get(joined.size() - 1);
      if (last != null && last[0] + last[1] == chunk[0] && last[1] + chunk[1] <= MAX_RANGE) {
        last[1] += chunk[1];
      } else {
        joined.add(chunk.clone());
      }
    }
    return joined;
  }

  /**
   * A local file as Parquet's stream, read in blocks through its channel (Parquet's own {@code
   * LocalInputFile} reads a byte array one byte at a time).
   */
  private static SeekableInputStream localStream(Path path) throws IOException {
    FileChannel channel = FileChannel.open(path);
    return new DelegatingSeekableInputStream(Channels.newInputStream(channel)) {
      @Override
      public long getPos() throws IOException {
        return channel.position();
      }

      @Override
      public void seek(long position) throws IOException {
        channel.position(position);
      }
    };
  }

  /** Whether writing failed for want of the scratch directory (rather than reading the table). */
  private boolean scratchFailed(IOException e) {
    if (e instanceof FileSystemException failed && failed.getFile() != null) {
      return failed.getFile().startsWith(directory.toString());
    }
    return String.valueOf(e.getMessage()).contains("No space left on device");
  }

  /**
   * The row groups whose midpoint lies in one of the tasks' byte ranges, in file order: how
   * Parquet's range filter assigns row groups to splits.
   */
  static List<BlockMetaData> rowGroups(ParquetFooters.Footer footer, List<FileScanTask> run) {
    long[][] ranges = new long[run.size()][];
    for (int t = 0; t < ranges.length; t++) {
      ranges[t] = new long[] {run.get(t).start(), run.get(t).start() + run.get(t).length()};
    }
    return rowGroupsIn(footer, ranges);
  }

  /** The row groups whose midpoint lies in one of the byte ranges ({start, end}), in file order. */
  static List<BlockMetaData> rowGroupsIn(ParquetFooters.Footer footer, long[][] ranges) {
    List<BlockMetaData> blocks = footer.metadata().getBlocks();
    long[] midpoints = footer.midpoints();
    List<BlockMetaData> picked = new ArrayList<>();
    for (int i = 0; i < midpoints.length; i++) {
      for (long[] range : ranges) {
        if (midpoints[i] >= range[0] && midpoints[i] < range[1]) {
          picked.add(blocks.get(i));
          break;
        }
      }
    }
    return picked;
  }

  /** The file's top-level fields that hold requested columns, with their ids. */
  private static MessageType project(
      MessageType file, Schema requested, String nameMappingJson, String location) {
    Set<Integer> wanted =
        requested.columns().stream().map(Types.NestedField::fieldId).collect(Collectors.toSet());
    NameMapping mapping = null;
    List<Type> kept = new ArrayList<>();
    for (Type field : file.getFields()) {
      Integer id = field.getId() == null ? null : field.getId().intValue();
      if (id == null) {
        if (nameMappingJson == null) {
          throw new UnsupportedOperationException(
              "no field ids and no name mapping for " + location);
        }
        mapping = mapping == null ? NameMappingParser.fromJson(nameMappingJson) : mapping;
        MappedField mapped = mapping.find(field.getName());
        id = mapped == null ? null : mapped.id();
      }
      if (id != null && wanted.contains(id)) {
        kept.add(field);
      }
    }
    if (kept.isEmpty()) {
      throw new UnsupportedOperationException("none of the requested columns are in " + location);
    }
    return new MessageType(file.getName(), kept);
  }

  /** Removes the directory and any excerpt still in it; closing again does nothing. */
  @Override
  public void close() {
    try {
      lock.close(); // releases the lock
      removeWithFiles(directory);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove " + directory, e);
    }
  }
}
