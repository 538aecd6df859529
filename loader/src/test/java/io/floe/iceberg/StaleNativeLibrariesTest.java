package io.floe.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Native libraries left by killed JVMs go; one being unpacked now, and other files, stay. */
class StaleNativeLibrariesTest {
  @TempDir Path tmp;

  @Test
  void librariesOlderThanTheAgeAreRemovedOthersKept() throws Exception {
    Path left = Files.write(tmp.resolve("jnilib-123.tmp"), new byte[1024]);
    Files.setLastModifiedTime(left, FileTime.from(Instant.now().minus(Duration.ofHours(2))));
    Path fresh = Files.write(tmp.resolve("jnilib-456.tmp"), new byte[1024]);
    Path other = Files.write(tmp.resolve("snappy-1.so"), new byte[16]);
    Files.setLastModifiedTime(other, FileTime.from(Instant.now().minus(Duration.ofHours(2))));

    StaleNativeLibraries.remove(tmp, StaleNativeLibraries.AGE);

    assertThat(left).doesNotExist();
    assertThat(fresh).exists();
    assertThat(other).exists();
  }
}
