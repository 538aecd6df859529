package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.client.FloeClient;
import io.floe.filter.FilterLimits;
import io.floe.protocol.ErrorCode;
import io.floe.protocol.Json;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import io.floe.util.Excerpt;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A long chain of {@code and} terms is served with exactly the rows it selects (checked against
 * Iceberg's generic reader), and one beyond the documented limits is refused INVALID_ARGUMENT with
 * a short description, never INTERNAL: on a real node, through a real Flight client, where the
 * filter is planned, written to the slices and evaluated.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LongFiltersTest {
  private FloeNode node;
  private BufferAllocator allocator;
  private FloeClient client;
  private FlightClient raw;
  private IcebergTestTables.TestTable table;

  @BeforeAll
  void start(@TempDir Path dir) {
    table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 1_500, TestRows.events(3));
    node = TestNodes.start();
    allocator = new RootAllocator();
    client = FloeClient.connect(allocator, node.location());
    raw = FlightClient.builder(allocator, node.location()).build();
  }

  @AfterAll
  void stop() throws Exception {
    raw.close();
    client.close();
    allocator.close();
    node.close();
  }

  /** {@code id != 0 and id != 2 and ...}: leaves out the first {@code terms} even ids. */
  private static String chainOfAnds(int terms) {
    return IntStream.range(0, terms)
        .mapToObj(i -> "id != " + (2L * i))
        .collect(Collectors.joining(" and "));
  }

  @Test
  void aThousandChainedAndTermsAreServedWithTheRowsTheySelect() {
    List<Long> expected =
        IcebergTestTables.readAllGeneric(table.table()).stream()
            .map(row -> (Long) row.getField("id"))
            .filter(id -> id % 2 == 1 || id >= 2_000)
            .sorted()
            .toList();

    client.load(
        new LoadRequest(
            DatasetSpec.of("thousand", table.metadataLocation()).withFilter(chainOfAnds(1_000)),
            true));

    assertThat(servedIds("thousand")).hasSize(2_000).isEqualTo(expected);
  }

  @Test
  void twentyThousandChainedAndTermsAreRefusedAsTheCallersMistake() {
    // Over the length limit: refused when the request is read.
    String twentyThousand = chainOfAnds(20_000);
    assertThat(twentyThousand.length()).isGreaterThan(DatasetSpec.FILTER_CHARS_MAX);
    assertInvalid("twenty-thousand", twentyThousand, "more than the 65536 a filter may have");

    // Within the length, over the terms: refused when planned, which load waits for.
    String short5000 =
        IntStream.range(0, 5_000).mapToObj(i -> "id<" + i).collect(Collectors.joining(" or "));
    assertThat(short5000.length()).isLessThan(DatasetSpec.FILTER_CHARS_MAX);
    try (CapturedLogs logs = CapturedLogs.open()) {
      assertInvalid("five-thousand", short5000, "more than " + FilterLimits.MAX_TERMS + " terms");
      // The dataset's FAILED line quotes the filter as the description does: by its ends.
      assertThat(logs.lines())
          .anySatisfy(line -> assertThat(line).contains("'five-thousand' FAILED"))
          .noneSatisfy(line -> assertThat(line).contains(short5000.substring(0, 200)));
    }
  }

  @Test
  void aLongChainInIcebergsJsonFormIsServedToo() {
    String json = "{\"type\": \"eq\", \"term\": \"id\", \"value\": 1}";
    for (int i = 1; i <= 700; i++) {
      json =
          "{\"type\": \"and\", \"left\": "
              + json
              + ", \"right\": {\"type\": \"not-eq\", \"term\": \"id\", \"value\": "
              + -i
              + "}}";
    }
    client.load(
        new LoadRequest(DatasetSpec.of("json", table.metadataLocation()).withFilter(json), true));

    assertThat(servedIds("json")).containsExactly(1L);
  }

  /** Sent raw, so that the node refuses it, not the Java client's own checks. */
  private void assertInvalid(String name, String filter, String why) {
    ObjectNode load = Json.object();
    load.put("name", name);
    load.put("table", table.metadataLocation());
    load.put("filter", filter);
    load.put("wait", true);
    assertThatThrownBy(
            () -> raw.doAction(new Action("load", Json.bytes(load))).forEachRemaining(r -> {}))
        .isInstanceOfSatisfying(
            FlightRuntimeException.class,
            e -> {
              assertThat(e.status().code())
                  .as(e.getMessage())
                  .isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
              assertThat(ErrorCode.of(e)).as(e.getMessage()).contains(ErrorCode.INVALID_REQUEST);
              assertThat(e.status().description())
                  .contains(why)
                  .hasSizeLessThanOrEqualTo(Excerpt.MAX_DESCRIPTION_CHARS);
            });
  }

  private List<Long> servedIds(String dataset) {
    List<Long> ids = new ArrayList<>();
    client.read(
        client.plan(dataset, 0, 1),
        root -> {
          BigIntVector id = (BigIntVector) root.getVector("id");
          for (int i = 0; i < root.getRowCount(); i++) {
            ids.add(id.get(i));
          }
        });
    ids.sort(null);
    return ids;
  }
}
