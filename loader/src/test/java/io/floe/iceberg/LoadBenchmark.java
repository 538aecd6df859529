package io.floe.iceberg;

import io.floe.arrow.ArrowSchemas;
import io.floe.spec.DatasetSpec;
import io.floe.spec.TableSource;
import io.floe.store.AllocatorReaper;
import io.floe.store.LoadedSlice;
import io.floe.table.StorageSettings;
import io.floe.table.TableAccess;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SchemaParser;

/**
 * Decoders side by side on the same table, files and columns (issue 22): every round runs each
 * contender once, in an order that rotates from round to round, on one thread and on all cores (one
 * task per slice on a pool of that many threads), and prints wall seconds, process CPU seconds,
 * rows/s and the ratio to pyarrow.dataset's rows/s of the same round. Best and median over the
 * rounds at the end. No assertions: a benchmark, not a test.
 *
 * <ul>
 *   <li>{@code floe-vectorized}: {@link SliceLoader} as nodes ran it before the native decoder
 *       (Iceberg's vectorized reader, then batches joined and packed into the slice's memory);
 *   <li>{@code floe-native}: {@link SliceLoader} with {@link SliceLoader.Decoders#NATIVE};
 *   <li>{@code iceberg-vectorized-N}: {@link VectorizedTaskReader} alone with N-row batches (no
 *       joining or packing): the tuning space of Iceberg's reader;
 *   <li>{@code arrow-native}: {@link NativeTaskReader} alone (Arrow's C++ reader through the JNI
 *       jar, imported into an accounted allocator, no packing);
 *   <li>{@code pyarrow}: {@code python/benchmarks/pyarrow_decode.py} in a subprocess ({@code
 *       dataset(files).to_table()}, timed inside the process: interpreter start not counted).
 * </ul>
 *
 * <p>With {@code --store s3} the table's data files are copied unchanged to s3proxy on 127.0.0.1,
 * in a JVM of its own ({@link S3Copy}), and the contenders read the same objects from it: {@code
 * floe} ({@link SliceLoader} as a node runs it, object-store files in parallel ranged requests),
 * {@code floe-one-request} (the same with {@code parallel-requests} 0: each range of a row group
 * one request after another, as loads ran before) and {@code pyarrow} through {@code
 * pyarrow.fs.S3FileSystem}. {@code --store-latency-ms} and {@code --store-mb-per-s} make the
 * server's GETs behave more like a remote store's (first-byte latency, per-request bandwidth);
 * {@code --requests} and {@code --range-size} set {@code floe}'s parallel reads (the node's
 * defaults otherwise).
 *
 * <p>With {@code shapes:ROWS} in place of the metadata file, the benchmark writes a table of nested
 * columns with position delete files (which go to the generic reader) and times Floe's load of it
 * against PyIceberg's scan ({@code python/benchmarks/pyiceberg_scan.py}): issue 22's target (e).
 *
 * <p>{@code mvn -B -o -q -pl loader test-compile org.codehaus.mojo:exec-maven-plugin:3.6.4:java
 * -Dexec.mainClass=io.floe.iceberg.LoadBenchmark -Dexec.classpathScope=test
 * -Dexec.cleanupDaemonThreads=false -Dexec.args="METADATA_JSON [--rounds R] [--threads 1,2] [--only
 * a,b] [--slice-target BYTES] [--python PY] [--store local|s3 [--store-latency-ms MS]
 * [--store-mb-per-s MBPS]]"}, or {@code ./floe bench-load}.
 */
public final class LoadBenchmark {
  /** A python with pyarrow; {@code ./floe bench-load} passes the project's venv. */
  private static final String PYTHON_DEFAULT = "python3";

  private LoadBenchmark() {}

  /** One run's figures. */
  record Run(double seconds, double cpuSeconds, long rows, long bytes) {}

  /** A contender: decodes the plan's slices on {@code threads} threads. */
  interface Contender {
    Run run(int threads) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    String metadata = args[0];
    int rounds = 5;
    List<Integer> threadCounts = List.of(1, Runtime.getRuntime().availableProcessors());
    List<String> only = List.of();
    String python = PYTHON_DEFAULT;
    long sliceTarget = 16L << 20; // floe.load.slice-target-size's default
    String store = "local";
    long storeLatency = 0;
    long storeSpeed = 0;
    StorageSettings.Builder reads = StorageSettings.builder();
    for (int i = 1; i < args.length; i += 2) {
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
        case "--threads" ->
            threadCounts =
                java.util.Arrays.stream(args[i + 1].split(",")).map(Integer::valueOf).toList();
        case "--only" -> only = List.of(args[i + 1].split(","));
        case "--python" -> python = args[i + 1];
        case "--slice-target" -> sliceTarget = Long.parseLong(args[i + 1]);
        case "--store" -> store = args[i + 1];
        case "--store-latency-ms" -> storeLatency = Long.parseLong(args[i + 1]);
        case "--store-mb-per-s" -> storeSpeed = Long.parseLong(args[i + 1]);
        case "--requests" -> reads.parallelRequests(Integer.parseInt(args[i + 1]));
        case "--range-size" -> reads.rangeSize(Long.parseLong(args[i + 1]));
        default -> throw new IllegalArgumentException("Unknown option " + args[i]);
      }
    }
    if (!store.equals("local") && !store.equals("s3")) {
      throw new IllegalArgumentException("Unknown --store " + store + " (local or s3)");
    }
    boolean shapes = metadata.startsWith(SHAPES);
    if (shapes) {
      metadata = shapesTable(Long.parseLong(metadata.substring(SHAPES.length())));
    }
    S3Copy s3 = null;
    if (store.equals("s3")) {
      try (TableAccess local = new TableAccess(StorageSettings.defaults())) {
        s3 = S3Copy.of(local.open(local.resolve(metadata, null)), storeLatency, storeSpeed);
      }
      metadata = s3.metadataLocation();
    }
    try (S3Copy server = s3;
        TableAccess tables =
            new TableAccess(server == null ? StorageSettings.defaults() : server.settings(reads));
        // A node's allocator: exact sizes from 64 KiB up, as slices are held on a node.
        BufferAllocator root = io.floe.arrow.NodeAllocation.root(Long.MAX_VALUE)) {
      DatasetSpec spec = DatasetSpec.of("bench", metadata);
      TableSource source = tables.resolve(spec.table(), spec.catalog());
      ScanPlan plan = new SlicePlanner(sliceTarget).plan(source, tables.open(source), spec, 1);
      List<SliceSpec> slices = plan.slices();
      List<String> files = new ArrayList<>();
      for (SliceSpec slice : slices) {
        for (FileScanTask task : new SliceRecords(tables.io(source), slice).tasks()) {
          String location = task.file().location();
          String path =
              server != null
                  ? location.substring("s3://".length()) // bucket/key, as pyarrow.fs names it
                  : NativeTaskReader.localPath(location).orElseThrow().toString();
          if (!files.contains(path)) {
            files.add(path);
          }
        }
      }
      System.out.printf(
          "%s: %d slices (target %,d bytes), %d files; %d cores, Java %s, %s; native library"
              + " loaded: %s%n",
          metadata,
          slices.size(),
          sliceTarget,
          files.size(),
          Runtime.getRuntime().availableProcessors(),
          System.getProperty("java.version"),
          java.time.Instant.now(),
          NativeTaskReader.available());

      Map<String, Contender> contenders = new LinkedHashMap<>();
      if (shapes) {
        // Nested columns and delete files: the generic reader's tables (target (e)), against
        // PyIceberg's scan, which applies the same position deletes.
        contenders.put(
            "floe", t -> loadSlices(tables, root, slices, SliceLoader.Decoders.NATIVE, t));
        String py = python;
        String table = metadata;
        contenders.put("pyiceberg", t -> pyiceberg(py, table, t));
      } else if (server != null) {
        System.out.printf(
            "objects on s3proxy at %s (its own JVM), %,d bytes, GETs with %d ms added latency and"
                + " %s each; every contender reads them from there%n",
            server.endpoint(),
            server.bytes(),
            storeLatency,
            storeSpeed == 0 ? "no bandwidth limit" : "at most " + storeSpeed + " MB/s");
        contenders.put(
            "floe", t -> loadSlices(tables, root, slices, SliceLoader.Decoders.NATIVE, t));
        // As loads ran before the native reader took object-store files (through excerpts):
        // Iceberg's vectorized reader, with parallel ranged reads.
        contenders.put(
            "floe-vectorized",
            t -> loadSlices(tables, root, slices, SliceLoader.Decoders.NATIVE, t, false));
        // As loads ran before parallel ranged reads: Iceberg's FileIO answers a row group's
        // vectored read one range, one request, after another.
        contenders.put(
            "floe-one-request",
            t -> {
              try (TableAccess serial =
                  new TableAccess(server.settings(StorageSettings.builder().parallelRequests(0)))) {
                return loadSlices(serial, root, slices, SliceLoader.Decoders.NATIVE, t);
              }
            });
        List<String> pyArgs = server.pyarrowArguments();
        String py = python;
        contenders.put("pyarrow", t -> pyarrow(py, pyArgs, files, t));
      } else {
        contenders.put(
            "floe-vectorized",
            t -> loadSlices(tables, root, slices, SliceLoader.Decoders.VECTORIZED, t));
        contenders.put(
            "floe-native", t -> loadSlices(tables, root, slices, SliceLoader.Decoders.NATIVE, t));
        for (int batch : new int[] {8_192, 32_768, 131_072}) {
          contenders.put(
              "iceberg-vectorized-" + batch,
              t -> decodeFiles(tables, source, root, slices, t, batch, false));
        }
        boolean wholeFiles = true;
        for (SliceSpec slice : slices) {
          for (List<FileScanTask> run : runs(new SliceRecords(tables.io(source), slice).tasks())) {
            wholeFiles &= NativeTaskReader.wholeLocalFile(run);
          }
        }
        if (wholeFiles) {
          contenders.put(
              "arrow-native", t -> decodeFiles(tables, source, root, slices, t, 32_768, true));
        } else {
          System.out.println(
              "arrow-native left out: files are split across slices, and Arrow's reader (through"
                  + " the JNI jar) reads whole files only; floe-native decodes excerpts of their"
                  + " row groups, floe-native-whole-files-only leaves them to the vectorized"
                  + " reader as Floe did before");
          contenders.put(
              "floe-native-whole-files-only",
              t -> loadSlices(tables, root, slices, SliceLoader.Decoders.NATIVE, t, false));
        }
        String py = python;
        contenders.put("pyarrow", t -> pyarrow(py, List.of(), files, t));
      }
      if (!only.isEmpty()) {
        contenders.keySet().retainAll(only);
      }

      Map<String, List<Run>> results = new LinkedHashMap<>();
      // Each run's rows/s over pyarrow's in the same round: neighbours in time, so a busy machine
      // slows both.
      Map<String, List<Double>> ratios = new LinkedHashMap<>();
      // The same for CPU seconds (pyarrow's over the contender's): what a row costs, which other
      // work on the machine disturbs less than wall time.
      Map<String, List<Double>> cpuRatios = new LinkedHashMap<>();
      List<String> names = new ArrayList<>(contenders.keySet());
      for (int round = 0; round < rounds; round++) {
        for (int threads : threadCounts) {
          Map<String, Run> thisRound = new LinkedHashMap<>();
          for (int k = 0; k < names.size(); k++) {
            String name = names.get((k + round) % names.size());
            Run run = contenders.get(name).run(threads);
            thisRound.put(name, run);
            results.computeIfAbsent(name + " @" + threads, n -> new ArrayList<>()).add(run);
            if (root.getAllocatedMemory() != 0) {
              throw new IllegalStateException(
                  name + " left " + root.getAllocatedMemory() + " bytes");
            }
          }
          Run reference = thisRound.getOrDefault("pyarrow", thisRound.get("pyiceberg"));
          if (reference != null) {
            for (Map.Entry<String, Run> e : thisRound.entrySet()) {
              ratios
                  .computeIfAbsent(e.getKey() + " @" + threads, n -> new ArrayList<>())
                  .add(reference.seconds() / e.getValue().seconds());
              cpuRatios
                  .computeIfAbsent(e.getKey() + " @" + threads, n -> new ArrayList<>())
                  .add(reference.cpuSeconds() / e.getValue().cpuSeconds());
            }
          }
          for (Map.Entry<String, Run> e : thisRound.entrySet()) {
            Run r = e.getValue();
            System.out.printf(
                Locale.ROOT,
                "round %d, %d thread(s): %-24s %7.3f s  cpu %6.2f s  %,11d rows  %6.2f M rows/s%s%n",
                round,
                threads,
                e.getKey(),
                r.seconds(),
                r.cpuSeconds(),
                r.rows(),
                r.rows() / r.seconds() / 1e6,
                reference == null
                    ? ""
                    : String.format(
                        Locale.ROOT,
                        "  %.2fx %s",
                        reference.seconds() / r.seconds(),
                        thisRound.containsKey("pyarrow") ? "pyarrow" : "pyiceberg"));
          }
        }
      }
      System.out.println();
      System.out.println(
          "contender @threads: best | median M rows/s, cores busy (median), ratio to the"
              + " reference's (pyarrow's, or PyIceberg's for shapes tables) best (median) at the"
              + " same threads; median and range of the ratios to it in the same round, of rows/s"
              + " and of CPU seconds (its over this one's)");
      for (Map.Entry<String, List<Run>> e : results.entrySet()) {
        String threads = e.getKey().substring(e.getKey().indexOf('@'));
        List<Run> reference =
            results.getOrDefault("pyarrow " + threads, results.get("pyiceberg " + threads));
        double best = best(e.getValue());
        double median = median(e.getValue());
        System.out.printf(
            Locale.ROOT,
            "%-30s %6.2f | %6.2f M rows/s  cores %.2f%s%s%s%n",
            e.getKey(),
            best / 1e6,
            median / 1e6,
            medianCores(e.getValue()),
            reference == null
                ? ""
                : String.format(
                    Locale.ROOT,
                    "  %.2fx (%.2fx)",
                    best / best(reference),
                    median / median(reference)),
            ratios.containsKey(e.getKey()) ? roundRatios(ratios.get(e.getKey())) : "",
            cpuRatios.containsKey(e.getKey())
                ? "  cpu" + roundRatios(cpuRatios.get(e.getKey())).substring("  per round".length())
                : "");
      }
    }
  }

  private static String roundRatios(List<Double> ratios) {
    double[] sorted = ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    double median =
        sorted.length % 2 == 1
            ? sorted[sorted.length / 2]
            : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    return String.format(
        Locale.ROOT, "  per round %.2fx [%.2f-%.2f]", median, sorted[0], sorted[sorted.length - 1]);
  }

  private static double best(List<Run> runs) {
    return runs.stream().mapToDouble(r -> r.rows() / r.seconds()).max().orElse(0);
  }

  private static double median(List<Run> runs) {
    double[] rates = runs.stream().mapToDouble(r -> r.rows() / r.seconds()).sorted().toArray();
    return rates.length % 2 == 1
        ? rates[rates.length / 2]
        : (rates[rates.length / 2 - 1] + rates[rates.length / 2]) / 2;
  }

  private static double medianCores(List<Run> runs) {
    double[] cores =
        runs.stream().mapToDouble(r -> r.cpuSeconds() / r.seconds()).sorted().toArray();
    return cores[cores.length / 2];
  }

  private static double processCpuSeconds() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime()
        / 1e9;
  }

  /**
   * Runs {@code work} for each slice on a pool of {@code threads}; answers rows and bytes. What the
   * slices decoded is held until all are done, as a node holds a dataset (and as pyarrow's table
   * holds its rows), then freed outside the timing.
   */
  private static Run timed(int threads, List<SliceSpec> slices, SliceWork work) throws Exception {
    AtomicLong rows = new AtomicLong();
    AtomicLong bytes = new AtomicLong();
    List<AutoCloseable> held = java.util.Collections.synchronizedList(new ArrayList<>());
    long started = System.nanoTime();
    double cpu = processCpuSeconds();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    Run run;
    try {
      List<Future<?>> done = new ArrayList<>();
      for (SliceSpec slice : slices) {
        done.add(
            pool.submit(
                () -> {
                  Decoded decoded = work.decode(slice);
                  held.add(decoded.memory());
                  rows.addAndGet(decoded.rows());
                  bytes.addAndGet(decoded.bytes());
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      run =
          new Run(
              (System.nanoTime() - started) / 1e9,
              processCpuSeconds() - cpu,
              rows.get(),
              bytes.get());
    } finally {
      pool.shutdown();
      for (AutoCloseable memory : held) {
        memory.close();
      }
    }
    return run;
  }

  /** What a slice decoded: its rows and bytes, and the memory that holds them. */
  record Decoded(long rows, long bytes, AutoCloseable memory) {}

  interface SliceWork {
    Decoded decode(SliceSpec slice) throws Exception;
  }

  /** Slices loaded as a node loads them. */
  private static Run loadSlices(
      TableAccess tables,
      BufferAllocator root,
      List<SliceSpec> slices,
      SliceLoader.Decoders decoders,
      int threads)
      throws Exception {
    return loadSlices(tables, root, slices, decoders, threads, true);
  }

  /**
   * Slices loaded as a node loads them; with {@code excerpts} off, as it did before the native
   * reader took files split across slices.
   */
  private static Run loadSlices(
      TableAccess tables,
      BufferAllocator root,
      List<SliceSpec> slices,
      SliceLoader.Decoders decoders,
      int threads,
      boolean excerpts)
      throws Exception {
    java.nio.file.Path scratch = java.nio.file.Path.of(System.getProperty("java.io.tmpdir"));
    try (AllocatorReaper reaper = new AllocatorReaper();
        RowGroupExcerpts split = excerpts ? RowGroupExcerpts.in(scratch) : null) {
      SliceLoader loader = new SliceLoader(root, tables, reaper, decoders, split);
      return timed(
          threads,
          slices,
          slice -> {
            LoadedSlice loaded = loader.load(slice);
            return new Decoded(loaded.rows(), loaded.bytes(), loaded::release);
          });
    }
  }

  /**
   * The consecutive tasks of one file in a slice: each reader opens a file once for all of its row
   * groups in the slice, as {@link SliceLoader} does.
   */
  static List<List<FileScanTask>> runs(List<FileScanTask> tasks) {
    List<List<FileScanTask>> runs = new ArrayList<>();
    for (FileScanTask task : tasks) {
      List<FileScanTask> last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
      if (last != null
          && last.get(0).file().location().equals(task.file().location())
          && task.start()
              == last.get(last.size() - 1).start() + last.get(last.size() - 1).length()) {
        last.add(task);
      } else {
        runs.add(new ArrayList<>(List.of(task)));
      }
    }
    return runs;
  }

  /**
   * Each slice's file runs decoded by one reader alone into record batches (no joining, packing).
   */
  private static Run decodeFiles(
      TableAccess tables,
      TableSource source,
      BufferAllocator root,
      List<SliceSpec> slices,
      int threads,
      int batchRows,
      boolean natively)
      throws Exception {
    return timed(
        threads,
        slices,
        slice -> {
          SliceRecords records = new SliceRecords(tables.io(source), slice);
          Schema requested = SchemaParser.fromJson(slice.requestedSchemaJson());
          List<Field> served = ArrowSchemas.fromIceberg(requested).getFields();
          long rows = 0;
          long bytes = 0;
          BufferAllocator allocator = root.newChildAllocator(slice.sliceId(), 0, Long.MAX_VALUE);
          List<ArrowRecordBatch> kept = new ArrayList<>();
          for (List<FileScanTask> run : runs(records.tasks())) {
            List<ArrowRecordBatch> batches =
                natively
                    ? NativeTaskReader.read(
                        tables.io(source),
                        run,
                        requested,
                        served,
                        slice.nameMappingJson(),
                        batchRows,
                        allocator)
                    : VectorizedTaskReader.read(
                        tables.io(source),
                        run,
                        requested,
                        served,
                        slice.nameMappingJson(),
                        batchRows,
                        allocator);
            for (ArrowRecordBatch batch : batches) {
              rows += batch.getLength();
              for (ArrowBuf buffer : batch.getBuffers()) {
                bytes += buffer.readableBytes();
              }
              kept.add(batch);
            }
          }
          return new Decoded(
              rows,
              bytes,
              () -> {
                kept.forEach(ArrowRecordBatch::close);
                allocator.close();
              });
        });
  }

  /** One pyarrow.dataset decode of the files in a subprocess, timed inside it. */
  private static Run pyarrow(String python, List<String> options, List<String> files, int threads)
      throws Exception {
    List<String> command = new ArrayList<>();
    command.add(python);
    command.add(script().toString());
    command.add("--threads");
    command.add(threads == 1 ? "1" : "all");
    command.addAll(options);
    command.addAll(files);
    return timedScript("pyarrow decode", command);
  }

  /** Tables of nested columns with position delete files: {@code shapes:ROWS}. */
  private static final String SHAPES = "shapes:";

  /**
   * A table of {@code rows} rows of every type the fixtures hold, nested ones included (structs,
   * lists, maps, lists of structs), in 8 files of 8 MiB row groups, with every tenth row deleted by
   * position delete files; written by Iceberg's Java writers under the temporary directory. Answers
   * its metadata file.
   */
  private static String shapesTable(long rows) {
    Path dir =
        Path.of(
            System.getProperty("java.io.tmpdir"),
            "floe-bench-shapes-" + rows + "-" + System.nanoTime());
    long started = System.nanoTime();
    io.floe.testing.IcebergTestTables.TestTable table =
        io.floe.testing.IcebergTestTables.in(dir)
            .rowGroupBytes(8L << 20)
            .create("shapes", io.floe.testing.TestRows.ALL_TYPES)
            .appendFiles(8, Math.toIntExact(rows / 8), io.floe.testing.TestRows.allTypes(7))
            .deletePositions(r -> (Long) r.getField("id") % 10 == 0);
    System.out.printf(
        "shapes table: %,d rows less every tenth by position deletes, written in %.1f s to %s%n",
        rows, (System.nanoTime() - started) / 1e9, dir);
    return table.metadataLocation();
  }

  /** One timed PyIceberg scan of the table (python/benchmarks/pyiceberg_scan.py). */
  private static Run pyiceberg(String python, String metadata, int threads) throws Exception {
    return timedScript(
        "PyIceberg scan",
        List.of(
            python,
            checkout().resolve("python/benchmarks/pyiceberg_scan.py").toString(),
            "--threads",
            threads == 1 ? "1" : "all",
            metadata));
  }

  /**
   * Runs a timing script that prints its run as the last line (seconds, cpu_seconds, rows, bytes).
   */
  private static Run timedScript(String what, List<String> command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String last = "";
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        last = line;
      }
    }
    if (process.waitFor() != 0) {
      throw new IllegalStateException(what + " failed: " + last);
    }
    return new Run(
        number(last, "seconds"),
        number(last, "cpu_seconds"),
        (long) number(last, "rows"),
        (long) number(last, "bytes"));
  }

  /** python/benchmarks/pyarrow_decode.py of the checkout, from the root or a module. */
  private static Path script() {
    return checkout().resolve("python/benchmarks/pyarrow_decode.py");
  }

  /** The checkout's root, from the root or a module. */
  static Path checkout() {
    Path dir = Path.of("").toAbsolutePath();
    for (Path d = dir; d != null; d = d.getParent()) {
      if (java.nio.file.Files.exists(d.resolve("python/benchmarks/pyarrow_decode.py"))) {
        return d;
      }
    }
    throw new IllegalStateException("No python/benchmarks/pyarrow_decode.py above " + dir);
  }

  private static double number(String json, String key) {
    int at = json.indexOf("\"" + key + "\": ") + key.length() + 4;
    int end = at;
    while (end < json.length() && "0123456789.eE+-".indexOf(json.charAt(end)) >= 0) {
      end++;
    }
    return Double.parseDouble(json.substring(at, end));
  }
}
