package io.floe.iceberg;

import java.io.IOException;
import org.apache.iceberg.io.InputFile;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.SeekableInputStream;

/**
 * An Iceberg {@link InputFile} as Parquet's, so that Floe can open a file's footer and column
 * chunks itself through the table's FileIO (and so through its location policy and its parallel
 * object-store reads).
 */
final class ParquetInput implements org.apache.parquet.io.InputFile {
  private final InputFile file;

  ParquetInput(InputFile file) {
    this.file = file;
  }

  @Override
  public long getLength() {
    return file.getLength();
  }

  @Override
  public SeekableInputStream newStream() {
    org.apache.iceberg.io.SeekableInputStream stream = file.newStream();
    return new DelegatingSeekableInputStream(stream) {
      @Override
      public long getPos() throws IOException {
        return stream.getPos();
      }

      @Override
      public void seek(long position) throws IOException {
        stream.seek(position);
      }
    };
  }

  @Override
  public String toString() {
    return file.location();
  }
}
