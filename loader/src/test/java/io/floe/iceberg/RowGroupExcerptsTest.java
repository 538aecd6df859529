package io.floe.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's scratch directory of excerpts: its own, locked while in use, gone when it closes. A
 * directory whose lock nobody holds (its node was killed) is removed when the next node starts; one
 * in use (another node, in this JVM or another process) is left alone.
 */
class RowGroupExcerptsTest {
  @TempDir Path parent;

  @Test
  void nodesInOneJvmKeepEachOthersDirectories() {
    try (RowGroupExcerpts first = RowGroupExcerpts.in(parent);
        RowGroupExcerpts second = RowGroupExcerpts.in(parent)) {
      assertThat(first.directory()).isDirectory();
      assertThat(second.directory()).isDirectory().isNotEqualTo(first.directory());
    }
    assertThat(parent).isEmptyDirectory();
  }

  @Test
  void directoriesNobodyHoldsAreRemovedAtTheNextStart() throws Exception {
    // A node killed while it held its lock leaves it free: the lock died with the process.
    Path killed = Files.createDirectory(parent.resolve("floe-excerpts-1"));
    Files.createFile(killed.resolve(".lock"));
    Files.write(killed.resolve("excerpt-7.parquet"), new byte[] {1, 2, 3});
    // Killed between making its directory and locking it: removed once it is a minute old.
    Path unlockedOld = Files.createDirectory(parent.resolve("floe-excerpts-2"));
    Files.setLastModifiedTime(unlockedOld, FileTime.from(Instant.now().minus(Duration.ofHours(1))));
    Path unlockedNew = Files.createDirectory(parent.resolve("floe-excerpts-3"));
    Path notOurs = Files.createDirectory(parent.resolve("other"));

    try (RowGroupExcerpts excerpts = RowGroupExcerpts.in(parent)) {
      assertThat(killed).doesNotExist();
      assertThat(unlockedOld).doesNotExist();
      assertThat(unlockedNew).as("perhaps a node making it now").isDirectory();
      assertThat(notOurs).isDirectory();
      Files.write(excerpts.directory().resolve("excerpt-1.parquet"), new byte[] {1});
      Path own = excerpts.directory();
      excerpts.close();
      assertThat(own).doesNotExist();
    }
  }
}
