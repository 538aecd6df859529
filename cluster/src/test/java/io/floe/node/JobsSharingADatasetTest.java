package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.client.DynamicJobReader;
import io.floe.client.FloeClient;
import io.floe.client.JobBatch;
import io.floe.client.JobOptions;
import io.floe.client.JobReader;
import io.floe.job.TailPolicy;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.ArrowRecords;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several jobs read one loaded dataset at the same time, each with its own columns (nested ones
 * too, in their own order), batch size, world size, order and mode; every row each of them gets
 * equals the table's row, projected to the job's columns.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JobsSharingADatasetTest {
  private static final String DATASET = "all_types";

  private ClientNode serving;
  private FloeClient client;
  private Map<Long, Record> table;

  @BeforeAll
  void start(@TempDir Path dir) {
    IcebergTestTables.TestTable written =
        IcebergTestTables.in(dir)
            .create("all_types", TestRows.ALL_TYPES)
            .appendFiles(3, 2_000, TestRows.allTypes(31));
    // Larger slices than the test default: a job stream sends one record batch per listed batch
    // whether or not its slice holds rows of it, so every slice costs every batch some work.
    serving = ClientNode.start("floe.load.slice-target-size = 160KiB");
    client = serving.client();
    client.load(
        new LoadRequest(
            DatasetSpec.of(DATASET, written.metadataLocation()).withBatchRows(700), true));
    table = new HashMap<>();
    for (Record row : IcebergTestTables.readAllGeneric(written.table())) {
      table.put((Long) row.getField("id"), row);
    }
    assertThat(table).hasSize(6_000);
  }

  @AfterAll
  void stop() throws Exception {
    serving.close();
  }

  @Test
  void jobsWithTheirOwnColumnsBatchesAndOrdersReadCorrectRowsAtOnce() throws Exception {
    JobOptions strings =
        JobOptions.builder("strings", DATASET, 100)
            .columns("id", "string_col", "struct_col")
            .seed(1)
            .blockRows(500)
            .build();
    JobOptions nested =
        JobOptions.builder("nested", DATASET, 64)
            .columns("int_list", "id", "str_int_map", "dec_38_10", "struct_list")
            .seed(2)
            .blockRows(128)
            .windowBlocks(2)
            .build();
    JobOptions everything =
        JobOptions.builder("everything", DATASET, 96).globalOrder().tail(TailPolicy.PAD).build();
    JobOptions leased =
        JobOptions.builder("leased", DATASET, 75)
            .columns("uuid_col", "double_col", "id")
            .mode(io.floe.job.JobMode.DYNAMIC)
            .seed(4)
            .blockRows(150)
            .windowBlocks(2)
            .build();

    ExecutorService threads = Executors.newFixedThreadPool(5);
    List<List<Long>> ids = new ArrayList<>();
    try {
      List<Future<List<Long>>> readers = new ArrayList<>();
      readers.add(threads.submit(() -> readRanks(strings, 2)));
      readers.add(threads.submit(() -> readRanks(nested, 4)));
      readers.add(threads.submit(() -> readRanks(everything, 3)));
      readers.add(threads.submit(() -> readLeases(leased, "leased-0")));
      readers.add(threads.submit(() -> readLeases(leased, "leased-1")));
      for (Future<List<Long>> reader : readers) {
        ids.add(reader.get());
      }
    } finally {
      threads.shutdownNow();
    }

    assertThat(ids.get(0)).containsExactlyInAnyOrderElementsOf(table.keySet());
    // 6,000 rows in batches of 64: 93 batches, 48 rows dropped.
    assertThat(ids.get(1)).hasSize(93 * 64).doesNotHaveDuplicates();
    assertThat(table.keySet()).containsAll(ids.get(1));
    // In batches of 96 with pad: 63 batches, the first 48 rows of the global order twice.
    List<Long> padded = new ArrayList<>(JobReads.globalOrder(client, DATASET));
    padded.addAll(new ArrayList<>(padded.subList(0, 48)));
    assertThat(ids.get(2)).containsExactlyInAnyOrderElementsOf(padded);
    List<Long> leasedIds = new ArrayList<>(ids.get(3));
    leasedIds.addAll(ids.get(4));
    assertThat(leasedIds).containsExactlyInAnyOrderElementsOf(table.keySet());
  }

  /** Every rank of a deterministic epoch, one after another, checking every row. */
  private List<Long> readRanks(JobOptions options, int worldSize) {
    Schema schema = projection(options);
    List<List<Long>> ranks = new ArrayList<>();
    for (int rank = 0; rank < worldSize; rank++) {
      List<Long> ids = new ArrayList<>();
      try (JobReader reader = client.readJob(options, 0, worldSize, rank, 0, 1)) {
        while (reader.hasNext()) {
          try (JobBatch batch = reader.next()) {
            ids.addAll(check(batch, schema));
          }
        }
      }
      ranks.add(ids);
    }
    // Join the ranks' shares of each global batch back into epoch order.
    int share = options.batchRows() / worldSize;
    List<Long> epoch = new ArrayList<>();
    for (int at = 0; at < ranks.get(0).size(); at += share) {
      for (List<Long> rank : ranks) {
        epoch.addAll(rank.subList(at, at + share));
      }
    }
    return epoch;
  }

  private List<Long> readLeases(JobOptions options, String worker) {
    Schema schema = projection(options);
    List<Long> ids = new ArrayList<>();
    try (DynamicJobReader reader = client.readDynamic(options, 0, worker)) {
      while (reader.hasNext()) {
        try (JobBatch batch = reader.next()) {
          ids.addAll(check(batch, schema));
          reader.ack(batch);
        }
      }
    }
    return ids;
  }

  /** Compares every row of a batch with the table's row of the same id; answers the ids. */
  private List<Long> check(JobBatch batch, Schema schema) {
    assertThat(batch.root().getSchema().getFields())
        .extracting(f -> f.getName())
        .containsExactlyElementsOf(schema.columns().stream().map(Types.NestedField::name).toList());
    List<Long> ids = new ArrayList<>();
    for (Record row : ArrowRecords.read(batch.root(), schema)) {
      Long id = (Long) row.getField("id");
      Record expected = GenericRecord.create(schema);
      for (Types.NestedField field : schema.columns()) {
        expected.setField(field.name(), table.get(id).getField(field.name()));
      }
      assertThat(row).as("row %d of %s", id, batch).isEqualTo(expected);
      ids.add(id);
    }
    return ids;
  }

  private static Schema projection(JobOptions options) {
    if (options.columns().isEmpty()) {
      return TestRows.ALL_TYPES;
    }
    List<Types.NestedField> fields = new ArrayList<>();
    for (String column : options.columns()) {
      fields.add(TestRows.ALL_TYPES.findField(column));
    }
    return new Schema(fields);
  }
}
