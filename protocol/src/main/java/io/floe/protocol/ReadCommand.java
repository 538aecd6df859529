package io.floe.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.util.Excerpt;

/**
 * A {@code GetFlightInfo} command descriptor, one of a sealed family: a shard of a dataset ({@link
 * ReadRequest}, {@code "kind": "shard_read"}) or a training job's batches ({@link JobReadRequest},
 * {@code "kind": "job_read"}). {@link #parse} dispatches on {@code kind}, and each codec reads only
 * a command tagged with its own kind.
 *
 * <p>Floe's clients always send {@code kind}. A plain Flight client may leave it out, and then one
 * rule, here and nowhere else, supplies it: a command without {@code kind} is a {@code job_read} if
 * it names a {@code job}, a {@code shard_read} if it names a {@code dataset}, and refused if it
 * names both or neither.
 */
public sealed interface ReadCommand permits ReadRequest, JobReadRequest {
  /** The command's wire form, tagged with its kind. */
  byte[] toJson();

  /**
   * @throws IllegalArgumentException for a malformed command, an unknown kind, or a command without
   *     a kind that names both or neither of {@code job} and {@code dataset}
   */
  static ReadCommand parse(byte[] command) {
    ObjectNode node = Json.parseObject(command, "flight descriptor command");
    String kind = kind(node);
    node.put("kind", kind);
    return switch (kind) {
      case ReadRequest.KIND -> ReadRequest.parse(node);
      case JobReadRequest.KIND -> JobReadRequest.parse(node);
      default ->
          throw new IllegalArgumentException(
              String.format(
                  "Unknown kind '%s' of flight descriptor command; known: %s, %s",
                  Excerpt.of(kind), ReadRequest.KIND, JobReadRequest.KIND));
    };
  }

  /** The command's {@code kind}, or for a command without one, the kind the rule above gives it. */
  private static String kind(ObjectNode command) {
    JsonNode kind = command.get("kind");
    if (kind != null) {
      if (!kind.isTextual()) {
        throw new IllegalArgumentException(
            String.format(
                "Field 'kind' in flight descriptor command must be %s or %s, got %s",
                ReadRequest.KIND, JobReadRequest.KIND, Excerpt.of(kind)));
      }
      return kind.asText();
    }
    boolean job = command.has("job");
    if (job == command.has("dataset")) {
      throw new IllegalArgumentException(
          String.format(
              "Flight descriptor command without 'kind' names %s: name a 'dataset' (%s) or a"
                  + " 'job' (%s), or say which with 'kind'",
              job ? "both 'job' and 'dataset'" : "neither 'dataset' nor 'job'",
              ReadRequest.KIND,
              JobReadRequest.KIND));
    }
    return job ? JobReadRequest.KIND : ReadRequest.KIND;
  }
}
