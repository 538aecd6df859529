package io.floe.demo;

import static org.apache.iceberg.types.Types.NestedField.required;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.types.Types;

/**
 * The demo's sample Iceberg table: a few million review-like events on local disk, written once and
 * reused afterwards.
 *
 * <p>Every value is a function of {@code (seed, id)}, so the same arguments always give the same
 * table, whatever the number of files or threads.
 */
public final class SampleTable {
  public static final long DEFAULT_ROWS = 2_000_000;
  public static final int DEFAULT_FILES = 8;
  public static final long DEFAULT_SEED = 20_240_601L;

  /** Small enough that each default file (250,000 rows) holds several row groups. */
  static final long ROW_GROUP_BYTES = 2L << 20;

  public static final Schema SCHEMA =
      new Schema(
          required(1, "id", Types.LongType.get()),
          required(2, "user_id", Types.IntegerType.get()),
          required(3, "rating", Types.FloatType.get()),
          required(4, "score", Types.DoubleType.get()),
          required(5, "lang", Types.StringType.get()),
          required(6, "text", Types.StringType.get()),
          required(7, "event_time", Types.TimestampType.withZone()));

  private static final OffsetDateTime START =
      OffsetDateTime.of(2024, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);
  private static final long MICROS_PER_YEAR = 366L * 24 * 3600 * 1_000_000;

  // Weighted like a real review stream: mostly English.
  private static final String[] LANGS = {
    "en", "en", "en", "en", "de", "de", "fr", "fr", "ja", "ja"
  };
  private static final Map<String, String[]> WORDS =
      Map.of(
          "en",
          new String[] {
            "great", "slow", "broken", "works", "as", "described", "would", "buy", "again",
            "the", "battery", "screen", "price", "quality", "arrived", "late", "love", "it"
          },
          "de",
          new String[] {
            "gut",
            "schnell",
            "geliefert",
            "leider",
            "kaputt",
            "der",
            "Preis",
            "stimmt",
            "wieder",
            "kaufen",
            "Qualität",
            "top"
          },
          "fr",
          new String[] {
            "très",
            "bon",
            "produit",
            "livraison",
            "rapide",
            "cassé",
            "le",
            "prix",
            "qualité",
            "parfait",
            "déçu"
          },
          "ja",
          new String[] {"とても", "良い", "商品", "です", "配送", "早い", "価格", "品質", "残念", "また", "買います"});

  private SampleTable() {}

  /** What {@link #ensure} found or wrote. */
  public record Result(String metadataLocation, long rowCount, boolean created) {}

  /** {@link #ensure(Path, long, int, long)} with the defaults: 2,000,000 rows in 8 files. */
  public static Result ensure(Path dir) {
    return ensure(dir, DEFAULT_ROWS, DEFAULT_FILES, DEFAULT_SEED);
  }

  /**
   * Returns the table at {@code dir}, writing it first unless {@code dir/metadata/} already holds a
   * metadata.json (then the arguments are ignored and the existing table is reused as is).
   */
  public static synchronized Result ensure(Path dir, long rows, int files, long seed) {
    String location = dir.toAbsolutePath().toString();
    HadoopTables tables = new HadoopTables(new Configuration());
    if (hasMetadataJson(dir.resolve("metadata"))) {
      Table table = tables.load(location);
      return new Result(metadataLocation(table), totalRecords(table), false);
    }
    // Data files without metadata are what an interrupted run leaves; no table refers to them.
    deleteRecursively(dir.resolve("data"));

    // Table creation and the append commit together, so metadata.json only appears once every
    // data file is in place: a crash mid-write never leaves a table that looks finished.
    Transaction create =
        tables.newCreateTableTransaction(
            location,
            SCHEMA,
            PartitionSpec.unpartitioned(),
            Map.of(
                TableProperties.FORMAT_VERSION,
                "2",
                TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES,
                String.valueOf(ROW_GROUP_BYTES)));
    AppendFiles append = create.newAppend();
    writeDataFiles(create.table(), rows, files, seed).forEach(append::appendFile);
    append.commit();
    create.commitTransaction();

    Table table = tables.load(location);
    return new Result(metadataLocation(table), totalRecords(table), true);
  }

  /** The row with the given id; what the table holds at that id for the same seed. */
  public static Record row(long seed, long id) {
    Record row = GenericRecord.create(SCHEMA);
    fill(row, seed, id);
    return row;
  }

  /** Writes (or finds) the table: {@code SampleTable <dir> [rows] [files] [seed]}. */
  public static void main(String[] args) {
    if (args.length < 1) {
      System.err.println("usage: SampleTable <dir> [rows] [files] [seed]");
      System.exit(2);
    }
    long rows = args.length > 1 ? Long.parseLong(args[1]) : DEFAULT_ROWS;
    int files = args.length > 2 ? Integer.parseInt(args[2]) : DEFAULT_FILES;
    long seed = args.length > 3 ? Long.parseLong(args[3]) : DEFAULT_SEED;
    long start = System.nanoTime();
    Result result = ensure(Path.of(args[0]), rows, files, seed);
    System.out.printf(
        "%s %,d rows at %s in %d ms%n",
        result.created() ? "wrote" : "reused",
        result.rowCount(),
        result.metadataLocation(),
        (System.nanoTime() - start) / 1_000_000);
  }

  // One writer per file, as many files at once as there are cores.
  private static List<DataFile> writeDataFiles(Table table, long rows, int files, long seed) {
    int threads = Math.max(1, Math.min(files, Runtime.getRuntime().availableProcessors()));
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<DataFile>> futures = new ArrayList<>();
      for (int f = 0; f < files; f++) {
        long from = rows * f / files;
        long to = rows * (f + 1) / files;
        futures.add(pool.submit(() -> writeDataFile(table, seed, from, to)));
      }
      List<DataFile> dataFiles = new ArrayList<>();
      for (Future<DataFile> future : futures) {
        dataFiles.add(future.get());
      }
      return dataFiles;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while writing the sample table", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("Could not write the sample table", e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  private static DataFile writeDataFile(Table table, long seed, long from, long to)
      throws IOException {
    String name =
        FileFormat.PARQUET.addExtension(String.format("%010d-%s", from, UUID.randomUUID()));
    DataWriter<Record> writer =
        Parquet.writeData(table.io().newOutputFile(table.locationProvider().newDataLocation(name)))
            .forTable(table)
            .withSpec(table.spec())
            .createWriterFunc(GenericParquetWriter::create)
            .overwrite()
            .build();
    // The writer copies each value out at write time, so one record can be refilled per row.
    Record row = GenericRecord.create(SCHEMA);
    try (writer) {
      for (long id = from; id < to; id++) {
        fill(row, seed, id);
        writer.write(row);
      }
    }
    return writer.toDataFile();
  }

  private static void fill(Record row, long seed, long id) {
    SplittableRandom rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + id);
    String lang = LANGS[rnd.nextInt(LANGS.length)];
    row.set(0, id);
    row.set(1, rnd.nextInt(100_000));
    row.set(2, rnd.nextInt(1, 11) / 2.0f);
    row.set(3, rnd.nextGaussian() * 15 + 50);
    row.set(4, lang);
    row.set(5, text(rnd, WORDS.get(lang)));
    row.set(6, START.plus(rnd.nextLong(MICROS_PER_YEAR), ChronoUnit.MICROS));
  }

  private static String text(SplittableRandom rnd, String[] words) {
    int count = rnd.nextInt(3, 13);
    StringBuilder text = new StringBuilder(count * 8);
    for (int i = 0; i < count; i++) {
      if (i > 0) {
        text.append(' ');
      }
      text.append(words[rnd.nextInt(words.length)]);
    }
    return text.toString();
  }

  private static boolean hasMetadataJson(Path metadataDir) {
    if (!Files.isDirectory(metadataDir)) {
      return false;
    }
    try (DirectoryStream<Path> json = Files.newDirectoryStream(metadataDir, "*.metadata.json")) {
      return json.iterator().hasNext();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String metadataLocation(Table table) {
    return ((HasTableOperations) table).operations().current().metadataFileLocation();
  }

  private static long totalRecords(Table table) {
    if (table.currentSnapshot() == null) {
      return 0;
    }
    String total = table.currentSnapshot().summary().get(SnapshotSummary.TOTAL_RECORDS_PROP);
    return total == null ? 0 : Long.parseLong(total);
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
