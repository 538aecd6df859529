package io.floe.iceberg;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.IOUtil;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.Util;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
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
   * A file's parsed footer, with each row group's midpoint, which decides the split a row group
   * belongs to, worked out from the footer's own fields exactly as Parquet's range filter does for
   * Iceberg's readers: the first column chunk's first page (its dictionary page if it has one
   * before the data), or for files whose first column carries no metadata the row group's file
   * offset (mended where it overlaps the row group before, PARQUET-2078); plus half the row group's
   * compressed size as recorded, else the sum of its column chunks'.
   */
  record Footer(ParquetMetadata metadata, long[] midpoints) {
    static Footer of(FileMetaData thrift) throws IOException {
      List<RowGroup> rowGroups = thrift.getRow_groups();
      long[] midpoints = new long[rowGroups == null ? 0 : rowGroups.size()];
      boolean firstColumnHasMetadata =
          midpoints.length == 0 || rowGroups.get(0).getColumns().get(0).isSetMeta_data();
      long previousStart = 0;
      long previousSize = 0;
      for (int i = 0; i < midpoints.length; i++) {
        RowGroup rowGroup = rowGroups.get(i);
        long start;
        if (firstColumnHasMetadata) {
          start = firstPage(rowGroup.getColumns().get(0).getMeta_data());
        } else {
          start = rowGroup.getFile_offset();
          if (previousStart != 0
              && previousStart <= start
              && start < previousStart + previousSize) {
            start = previousStart + previousSize;
          }
          previousStart = start;
          previousSize = rowGroup.getTotal_compressed_size();
        }
        long size = 0;
        if (rowGroup.isSetTotal_compressed_size()) {
          size = rowGroup.getTotal_compressed_size();
        } else {
          for (ColumnChunk column : rowGroup.getColumns()) {
            size += column.getMeta_data().getTotal_compressed_size();
          }
        }
        midpoints[i] = start + size / 2;
      }
      return new Footer(new ParquetMetadataConverter().fromParquetMetadata(thrift), midpoints);
    }

    private static long firstPage(ColumnMetaData column) {
      long offset = column.getData_page_offset();
      if (column.isSetDictionary_page_offset() && offset > column.getDictionary_page_offset()) {
        offset = column.getDictionary_page_offset();
      }
      return offset;
    }
  }

  /**
   * The whole footer of the data file at {@code location}, read through {@code io} on first use.
   *
   * @throws UncheckedIOException when the file cannot be read or is not Parquet
   * @throws UnsupportedOperationException for a file with an encrypted footer or columns
   */
  Footer footer(FileIO io, String location, long length) {
    return footers.get(new Key(location, length), key -> read(io, key));
  }

  /** Parquet's trailer: the footer's length, then the magic. */
  private static final int TRAILER = 8;

  private static Footer read(FileIO io, Key key) {
    InputFile file = io.newInputFile(key.location(), key.length());
    try (SeekableInputStream in = file.newStream()) {
      long length = key.length();
      if (length < TRAILER + 4) {
        throw new IOException(key.location() + " is too short to be a Parquet file");
      }
      byte[] trailer = new byte[TRAILER];
      in.seek(length - TRAILER);
      IOUtil.readFully(in, trailer, 0, TRAILER);
      String magic = new String(trailer, 4, 4, StandardCharsets.US_ASCII);
      if (magic.equals("PARE")) {
        throw new UnsupportedOperationException("encrypted footer in " + key.location());
      }
      if (!magic.equals("PAR1")) {
        throw new IOException(key.location() + " is not a Parquet file (no PAR1 at its end)");
      }
      int footerLength = ByteBuffer.wrap(trailer, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
      if (footerLength <= 0 || footerLength > length - TRAILER - 4) {
        throw new IOException(key.location() + " has a footer length out of the file");
      }
      byte[] footer = new byte[footerLength];
      in.seek(length - TRAILER - footerLength);
      IOUtil.readFully(in, footer, 0, footerLength);
      FileMetaData thrift = Util.readFileMetaData(new ByteArrayInputStream(footer));
      if (thrift.isSetEncryption_algorithm()) {
        throw new UnsupportedOperationException("encrypted columns in " + key.location());
      }
      return Footer.of(thrift);
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
