package io.floe.protocol;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.spec.DatasetSpec;
import io.floe.util.Preconditions;
import java.util.Set;

/**
 * A {@code GetFlightInfo} command descriptor: which dataset, and optionally which shard of how
 * many. Shard {@code i} of {@code n} is a contiguous global row range; every reader of one dataset
 * shares one copy whatever its shard count.
 */
public record ReadRequest(String dataset, int shardIndex, int shardCount) implements ReadCommand {
  private static final String WHAT = "flight descriptor command";

  /** The {@code kind} of a command descriptor that reads a shard of a dataset. */
  public static final String KIND = "shard_read";

  public ReadRequest {
    DatasetSpec.checkName(dataset);
    Preconditions.checkArgument(
        shardCount > 0, "Invalid shard_count: %s (must be > 0)", shardCount);
    Preconditions.checkArgument(
        shardIndex >= 0 && shardIndex < shardCount,
        "Invalid shard_index: %s (must be in 0..%s for shard_count %s)",
        shardIndex,
        shardCount - 1,
        shardCount);
  }

  public static ReadRequest whole(String dataset) {
    return new ReadRequest(dataset, 0, 1);
  }

  public static ReadRequest parse(byte[] command) {
    return parse(Json.parseObject(command, WHAT));
  }

  /**
   * A command tagged {@code "kind": "shard_read"} ({@link ReadCommand#parse} reads an untagged
   * one).
   */
  static ReadRequest parse(ObjectNode node) {
    Fields fields = new Fields(node, WHAT, Set.of("kind", "dataset", "shard_index", "shard_count"));
    fields.requiredKind(KIND);
    return new ReadRequest(
        fields.requiredDatasetName("dataset"),
        fields.optionalInt("shard_index", 0),
        fields.optionalInt("shard_count", 1));
  }

  @Override
  public byte[] toJson() {
    ObjectNode node = Json.object();
    node.put("kind", KIND);
    node.put("dataset", dataset);
    node.put("shard_index", shardIndex);
    node.put("shard_count", shardCount);
    return Json.bytes(node);
  }
}
