package io.floe.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.iceberg.DataFile;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.Util;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The row groups an excerpt takes for a byte range are those Parquet's own range filter gives
 * Iceberg's readers for it, on footers as written and on footers with the fields that filter reads
 * first set otherwise: a dictionary page offset of 0, row groups' own compressed sizes.
 */
class ParquetFootersTest {
  @TempDir Path dir;

  @Test
  void rowGroupsForARangeAreThoseParquetsRangeFilterKeeps() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(1, 8_000, TestRows.events(3));
    DataFile file = table.dataFiles().get(0);
    assertThat(table.rowGroupCount(file)).isGreaterThan(3);
    byte[] footer = footerBytes(NativeTaskReader.localPath(file.location()).orElseThrow());
    long length = file.fileSizeInBytes();

    List<Consumer<FileMetaData>> variants =
        List.of(
            thrift -> {},
            thrift ->
                thrift
                    .getRow_groups()
                    .forEach(
                        g -> g.getColumns().get(0).getMeta_data().setDictionary_page_offset(0)),
            thrift ->
                thrift
                    .getRow_groups()
                    .forEach(g -> g.setTotal_compressed_size(g.getTotal_compressed_size() * 3 / 2)),
            thrift -> thrift.getRow_groups().forEach(RowGroup::unsetTotal_compressed_size));
    for (int v = 0; v < variants.size(); v++) {
      FileMetaData thrift = Util.readFileMetaData(new ByteArrayInputStream(footer));
      variants.get(v).accept(thrift);
      ByteArrayOutputStream written = new ByteArrayOutputStream();
      Util.writeFileMetaData(thrift, written);
      ParquetFooters.Footer ours = ParquetFooters.Footer.of(copy(written.toByteArray()));
      for (long start = 0; start < length; start += Math.max(1, length / 37)) {
        for (long end : new long[] {start + length / 11, start + length / 4, length}) {
          List<BlockMetaData> parquets =
              new ParquetMetadataConverter(org.apache.parquet.ParquetReadOptions.builder().build())
                  .readParquetMetadata(
                      new ByteArrayInputStream(written.toByteArray()),
                      ParquetMetadataConverter.range(start, end))
                  .getBlocks();
          List<BlockMetaData> picked =
              RowGroupExcerpts.rowGroupsIn(ours, new long[][] {{start, end}});
          assertThat(positions(picked))
              .as("variant %d, range [%d, %d)", v, start, end)
              .isEqualTo(positions(parquets));
        }
      }
    }
  }

  private static FileMetaData copy(byte[] thrift) throws Exception {
    return Util.readFileMetaData(new ByteArrayInputStream(thrift));
  }

  private static List<String> positions(List<BlockMetaData> blocks) {
    List<String> out = new ArrayList<>();
    for (BlockMetaData block : blocks) {
      out.add(block.getColumns().get(0).getFirstDataPageOffset() + "/" + block.getRowCount());
    }
    return out;
  }

  private static byte[] footerBytes(Path path) throws Exception {
    try (RandomAccessFile in = new RandomAccessFile(path.toFile(), "r")) {
      byte[] trailer = new byte[8];
      in.seek(in.length() - 8);
      in.readFully(trailer);
      int length = ByteBuffer.wrap(trailer, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
      byte[] footer = new byte[length];
      in.seek(in.length() - 8 - length);
      in.readFully(footer);
      return footer;
    }
  }
}
