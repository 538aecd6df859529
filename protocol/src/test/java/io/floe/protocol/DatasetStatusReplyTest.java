package io.floe.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.protocol.DatasetStatusReply.RetainedLayout;
import io.floe.protocol.DatasetStatusReply.State;
import io.floe.spec.TableSource;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A dataset status the node encodes is read back by the clients' codec as the same value, with the
 * field names docs/protocol.md gives.
 */
class DatasetStatusReplyTest {
  private static final DatasetStatusReply FULL =
      new DatasetStatusReply(
          "clicks",
          State.READY,
          new TableSource.InCatalog("lake", "db.clicks"),
          8,
          8,
          1_200_000,
          98_566_144,
          7404129980528170357L,
          4.2,
          Map.of("vectorized", 7, "generic", 1),
          new RefreshReply(
              "FAILED", 6911, 7404L, 6, 2, 1, 1.3, new ErrorReply("NOT_FOUND", "gone")),
          List.of(new RetainedLayout(6911, "3f9a0c2e5b7d1e44", 7, 1_100_000, List.of("resnet-a"))),
          null,
          false,
          false,
          new io.floe.tenant.Owner("team-a", "ops"),
          2);

  private static final DatasetStatusReply FAILED =
      new DatasetStatusReply(
          "big",
          State.FAILED,
          new TableSource.AtLocation("/data/big"),
          1,
          4,
          0,
          0,
          42L,
          null,
          Map.of(),
          null,
          List.of(),
          new ErrorReply("RESOURCE_EXHAUSTED", "slice 'big/1' of dataset 'big': memory limit"),
          true,
          true,
          io.floe.tenant.Owner.LEGACY,
          1);

  @Test
  void everyFieldRoundTrips() {
    for (DatasetStatusReply status :
        List.of(
            FULL,
            FAILED,
            new DatasetStatusReply(
                "none",
                State.ABSENT,
                null,
                0,
                0,
                0,
                0,
                null,
                null,
                null,
                null,
                null,
                null,
                false,
                false,
                null,
                0))) {
      assertThat(DatasetStatusReply.parse(status.encode())).isEqualTo(status);
    }
    assertThat(DatasetStatusReply.parseList(DatasetStatusReply.encodeList(List.of(FULL, FAILED))))
        .containsExactly(FULL, FAILED);
  }

  @Test
  void theWireHasTheDocumentedNames() {
    String failed = new String(FAILED.encode(), StandardCharsets.UTF_8);
    assertThat(failed)
        .contains("\"source\":{\"location\":\"/data/big\"}")
        .contains("\"error\":{\"kind\":\"RESOURCE_EXHAUSTED\",\"message\":")
        .contains("\"stale\":true")
        .contains("\"dropped\":true")
        .contains("\"owner\":{\"tenant\":\"default\"}")
        .doesNotContain("failure");
    assertThat(new String(FULL.encode(), StandardCharsets.UTF_8))
        .contains("\"source\":{\"catalog\":\"lake\",\"table\":\"db.clicks\"}")
        .contains("\"seconds_to_ready\":4.2")
        .contains("\"refresh\":{\"state\":\"FAILED\",\"from_snapshot\":6911,\"to_snapshot\":7404")
        .contains("\"retained_layouts\":[{\"snapshot_id\":6911,\"fingerprint\":")
        .contains("\"owner\":{\"tenant\":\"team-a\",\"caller\":\"ops\"}")
        .contains("\"replicas\":2")
        .doesNotContain("stale")
        .doesNotContain("dropped");
  }

  @Test
  void aNewerNodesFieldsAreLeftAloneAndMissingOnesNamed() {
    byte[] newer =
        ("{\"name\":\"a\",\"state\":\"LOADING\",\"slices_loaded\":1,\"slices_total\":2,"
                + "\"rows\":3,\"bytes\":4,\"replicas\":2}")
            .getBytes(StandardCharsets.UTF_8);
    assertThat(DatasetStatusReply.parse(newer).state()).isEqualTo(State.LOADING);
    assertThatThrownBy(
            () -> DatasetStatusReply.parse("{\"name\":\"a\"}".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("Missing field 'state' in dataset status");
    assertThatThrownBy(
            () ->
                DatasetStatusReply.parse(
                    "{\"name\":\"a\",\"state\":\"GONE\"}".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("Unknown state 'GONE'");
  }
}
