package io.floe.iceberg;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import org.apache.iceberg.io.FileIO;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;

/**
 * Parsed Parquet footers, kept per node so that the slices of one file parse its footer once: a
 * footer holds every row group's column statistics, and a table cut into many slices per file
 * otherwise parses each footer once per slice. Data files never change under one location and
 * length (Iceberg writes new files), so an entry needs no invalidation; entries are bounded by
 * column chunks held and dropped when unused for a while.
 */
final class ParquetFooters {
  /** About 300 bytes of heap each: some 30 MB at most. */
  private static final long MAX_COLUMN_CHUNKS = 100_000;

  private static final Duration IDLE = Duration.ofMinutes(5);

  private record Key(String location, long length) {}

  private final Cache<Key, Footer> footers =
      Caffeine.newBuilder()
          .maximumWeight(MAX_COLUMN_CHUNKS)
          .weigher((Key key, Footer footer) -> columnChunks(footer.metadata()))
          .expireAfterAccess(IDLE)
          .build();

  /**
   * A file's parsed footer, with each row group's midpoint (its first byte plus half its compressed
   * size), which decides the split a row group belongs to.
   */
  record Footer(ParquetMetadata metadata, long[] midpoints) {
    static Footer of(ParquetMetadata metadata) {
      List<BlockMetaData> blocks = metadata.getBlocks();
      long[] midpoints = new long[blocks.size()];
      for (int i = 0; i < midpoints.length; i++) {
        BlockMetaData block = blocks.get(i);
        midpoints[i] = block.getStartingPos() + block.getCompressedSize() / 2;
      }
      return new Footer(metadata, midpoints);
    }
  }

  /**
   * The whole footer of the data file at {@code location}, read through {@code io} on first use.
   *
   * @throws UncheckedIOException when the file cannot be read or is not Parquet
   */
  Footer footer(FileIO io, String location, long length) {
    return footers.get(new Key(location, length), key -> Footer.of(read(io, key)));
  }

  private static ParquetMetadata read(FileIO io, Key key) {
    ParquetInput input = new ParquetInput(io.newInputFile(key.location(), key.length()));
    try (ParquetFileReader reader =
        ParquetFileReader.open(input, ParquetReadOptions.builder().build())) {
      return reader.getFooter();
    } catch (IOException e) {
      throw new UncheckedIOException("Reading the Parquet footer of " + key.location(), e);
    }
  }

  private static int columnChunks(ParquetMetadata footer) {
    int chunks = 0;
    for (BlockMetaData block : footer.getBlocks()) {
      chunks += block.getColumns().size();
    }
    return Math.max(1, chunks);
  }
}
