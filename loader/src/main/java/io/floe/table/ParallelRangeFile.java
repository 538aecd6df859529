package io.floe.table;

import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

/** An object-store file whose streams read in parallel ranges ({@link ParallelRangeStream}). */
final class ParallelRangeFile implements InputFile {
  private final InputFile file;
  private final ParallelReads reads;

  ParallelRangeFile(InputFile file, ParallelReads reads) {
    this.file = file;
    this.reads = reads;
  }

  @Override
  public long getLength() {
    return file.getLength();
  }

  @Override
  public SeekableInputStream newStream() {
    return new ParallelRangeStream(file, reads);
  }

  @Override
  public String location() {
    return file.location();
  }

  @Override
  public boolean exists() {
    return file.exists();
  }

  @Override
  public String toString() {
    return file.toString();
  }
}
