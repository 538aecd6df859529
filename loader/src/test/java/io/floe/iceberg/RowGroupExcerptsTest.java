package io.floe.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's scratch directory of excerpts: its own, named for its process, gone when it closes; the
 * directories that killed nodes left behind are removed when the next one starts, and those of
 * nodes still running are left alone.
 */
class RowGroupExcerptsTest {
  @TempDir Path parent;

  @Test
  void directoriesOfStoppedProcessesAreRemovedThoseOfRunningOnesKept() throws Exception {
    Process running = new ProcessBuilder("sleep", "60").start();
    Process ended = new ProcessBuilder("true").start();
    try {
      assertThat(ended.waitFor(30, TimeUnit.SECONDS)).isTrue();
      Path live = Files.createDirectory(parent.resolve("floe-excerpts-" + running.pid() + "-1"));
      Path abandoned = Files.createDirectory(parent.resolve("floe-excerpts-" + ended.pid() + "-2"));
      Files.write(abandoned.resolve("excerpt-7.parquet"), new byte[] {1, 2, 3});
      Path mine =
          Files.createDirectory(
              parent.resolve("floe-excerpts-" + ProcessHandle.current().pid() + "-3"));
      Path other = Files.createDirectory(parent.resolve("floe-excerpts-other"));

      try (RowGroupExcerpts excerpts = RowGroupExcerpts.in(parent)) {
        assertThat(live).isDirectory();
        assertThat(other).as("not named for a process").isDirectory();
        assertThat(abandoned).doesNotExist();
        assertThat(mine).as("this process's id before a restart").doesNotExist();
        assertThat(excerpts.directory().getFileName().toString())
            .startsWith("floe-excerpts-" + ProcessHandle.current().pid() + "-");
        Files.write(excerpts.directory().resolve("excerpt-1.parquet"), new byte[] {1});
        Path own = excerpts.directory();
        excerpts.close();
        assertThat(own).doesNotExist();
      }
    } finally {
      running.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }
}
