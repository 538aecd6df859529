package io.floe.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.spec.DatasetSpec;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JVM that cannot load the native library (here: its temporary directory, where the library is
 * unpacked, does not exist) still loads every slice, with Iceberg's vectorized reader, and says why
 * once. Runs in a JVM of its own: the library loads once per JVM.
 */
class NativeLibraryFallbackTest {
  @TempDir Path dir;

  @Test
  void slicesLoadVectorizedWhenTheNativeLibraryCannotBeLoaded() throws Exception {
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .rowGroupBytes(1L << 20)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 500, TestRows.events(5));
    Path log = dir.resolve("child.log");
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> entries = new java.util.ArrayList<>();
    for (String entry : classpath.split(java.io.File.pathSeparator)) {
      entries.add(
          entry.contains("arrow-dataset")
              ? classesOnly(Path.of(entry), dir.resolve("dataset"))
              : entry);
    }
    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.nio=ALL-UNNAMED",
                "-cp",
                String.join(java.io.File.pathSeparator, entries),
                Child.class.getName(),
                table.metadataLocation())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    assertThat(child.waitFor(120, TimeUnit.SECONDS)).as("child finished").isTrue();
    String output = Files.readString(log, StandardCharsets.UTF_8);

    assertThat(child.exitValue()).as(output).isZero();
    assertThat(output)
        .contains("decoders [vectorized, vectorized]")
        .contains("rows 1000")
        .containsOnlyOnce("Arrow's native Parquet reader could not be loaded");
  }

  /** The jar's classes without its native libraries, unpacked under {@code target}. */
  private static String classesOnly(Path jar, Path target) throws java.io.IOException {
    try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(jar.toFile())) {
      for (java.util.zip.ZipEntry entry : java.util.Collections.list(zip.entries())) {
        if (entry.getName().endsWith(".class")) {
          Path out = target.resolve(entry.getName());
          Files.createDirectories(out.getParent());
          try (java.io.InputStream in = zip.getInputStream(entry)) {
            Files.copy(in, out);
          }
        }
      }
    }
    return target.toString();
  }

  /** Loads every slice twice with the native decoder asked for; prints decoders and rows. */
  public static final class Child {
    public static void main(String[] args) {
      try (TableAccess tables = new TableAccess(StorageSettings.defaults());
          BufferAllocator allocator = new RootAllocator();
          SliceReads reads = new SliceReads(tables, allocator, 1, SliceLoader.Decoders.NATIVE)) {
        DatasetSpec spec = DatasetSpec.of("t", args[0]);
        List<String> decoders = reads.decoders(spec);
        decoders = reads.decoders(spec);
        System.out.println("decoders " + decoders);
        System.out.println("rows " + reads.readAll(spec).size());
      }
    }
  }
}
