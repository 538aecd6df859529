package io.floe.ticket;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.floe.job.JobRead;
import io.floe.job.JobSpec;
import io.floe.job.OrderSettings;
import io.floe.job.TailPolicy;
import io.floe.protocol.Json;
import io.floe.spec.DatasetSpec;
import io.floe.util.Preconditions;
import java.util.ArrayList;
import java.util.List;

/**
 * What one {@code DoGet} of a job serves: the rows of its {@link JobRead} (a rank's share of some
 * global batches of an epoch) that sit in the slices the plan placed on {@code holder}, in record
 * batches of up to {@code batchesPerMessage} consecutive listed global batches that have any (in
 * the epoch's order, with the batch indices and the rows' places in the rank's batches as the
 * message's metadata, {@link JobBatchMetadata}). The read fixes those rows and {@code placement},
 * the fingerprint of the layout's placement, fixes where they are, so the serving node needs no job
 * state, only the layout; a node whose view of the placement differs refuses the ticket and the
 * reader plans again. The wire form is flat: the read's fields sit beside the ticket's own.
 *
 * <p>{@code avoid} lists the nodes the plan kept slices off (a reader could not reach them): each
 * slice with a copy elsewhere was placed on its first other holder, and the serving node places
 * them the same way to know which are its own.
 */
public record JobTicket(
    String dataset,
    String holder,
    String placement,
    String job,
    JobRead read,
    List<String> columns,
    int batchesPerMessage,
    List<String> avoid)
    implements SignedTicket {
  static final String KIND = "job";

  public JobTicket {
    DatasetSpec.checkName(dataset);
    JobSpec.checkId(job);
    columns = List.copyOf(columns);
    avoid = avoid == null ? List.of() : List.copyOf(avoid);
    Preconditions.checkArgument(
        holder != null && !holder.isBlank(), "Invalid ticket: no holder for dataset '%s'", dataset);
    Preconditions.checkArgument(
        placement != null && !placement.isBlank(),
        "Invalid ticket: no placement for dataset '%s'",
        dataset);
    Preconditions.checkArgument(read != null, "Invalid ticket: no read for dataset '%s'", dataset);
    Preconditions.checkArgument(
        batchesPerMessage >= 1,
        "Invalid ticket: batches_per_message %s for dataset '%s'",
        batchesPerMessage,
        dataset);
  }

  /** A ticket placed as the layout says. */
  public JobTicket(
      String dataset,
      String holder,
      String placement,
      String job,
      JobRead read,
      List<String> columns,
      int batchesPerMessage) {
    this(dataset, holder, placement, job, read, columns, batchesPerMessage, List.of());
  }

  /** A ticket for one global batch per record batch. */
  public JobTicket(
      String dataset,
      String holder,
      String placement,
      String job,
      JobRead read,
      List<String> columns) {
    this(dataset, holder, placement, job, read, columns, 1, List.of());
  }

  static boolean isJobTicket(ObjectNode node) {
    return KIND.equals(node.path("kind").asText(null));
  }

  @Override
  public String canonical() {
    String text =
        String.join(
            "\n",
            "floe-job-ticket-v2",
            dataset,
            holder,
            placement,
            job,
            read.layout(),
            Long.toString(read.epoch()),
            Long.toString(read.order().seed()),
            Boolean.toString(read.order().shuffle()),
            Integer.toString(read.order().blockRows()),
            Integer.toString(read.order().windowBlocks()),
            Integer.toString(read.batchRows()),
            read.tail().wireName(),
            Json.string(columnsJson()),
            Integer.toString(read.worldSize()),
            Integer.toString(read.rank()),
            Long.toString(read.batchFrom()),
            Long.toString(read.batchTo()),
            Long.toString(read.batchStep()));
    // Single-row units, the only kind before runs existed, sign as they did then, so those tickets
    // verify on nodes of either age; a run order signs its run length too, so a node that knows no
    // runs refuses its tickets rather than serving single rows.
    int runRows = read.order().runRows();
    if (runRows != 1) {
      text += "\nrun_rows=" + runRows;
    }
    // Likewise for record batches of several global batches: a node that cannot frame them so
    // refuses the ticket rather than sending a framing its reader does not expect.
    if (batchesPerMessage != 1) {
      text += "\nbatches_per_message=" + batchesPerMessage;
    }
    // And for a placement that avoided nodes: a node that does not know replicas refuses it
    // rather than serving the slices the layout places on it.
    return avoid.isEmpty() ? text : text + "\navoid=" + Json.string(strings(avoid));
  }

  private ArrayNode columnsJson() {
    return strings(columns);
  }

  private static ArrayNode strings(List<String> values) {
    ArrayNode array = Json.object().arrayNode();
    values.forEach(array::add);
    return array;
  }

  @Override
  public void writeTo(ObjectNode node) {
    node.put("kind", KIND);
    node.put("dataset", dataset);
    node.put("holder", holder);
    node.put("placement", placement);
    node.put("job", job);
    node.put("layout", read.layout());
    node.put("epoch", read.epoch());
    node.put("seed", read.order().seed());
    node.put("shuffle", read.order().shuffle());
    node.put("block_rows", read.order().blockRows());
    node.put("window_blocks", read.order().windowBlocks());
    node.put("run_rows", read.order().runRows());
    node.put("batch_rows", read.batchRows());
    node.put("tail", read.tail().wireName());
    node.set("columns", columnsJson());
    node.put("world_size", read.worldSize());
    node.put("rank", read.rank());
    node.put("batch_from", read.batchFrom());
    node.put("batch_to", read.batchTo());
    node.put("batch_step", read.batchStep());
    if (batchesPerMessage != 1) {
      node.put("batches_per_message", batchesPerMessage);
    }
    if (!avoid.isEmpty()) {
      node.set("avoid", strings(avoid));
    }
  }

  /**
   * @throws IllegalArgumentException naming what is missing or malformed
   */
  static JobTicket parse(ObjectNode node) {
    List<String> columns = texts(node, "columns", true);
    return new JobTicket(
        text(node, "dataset"),
        text(node, "holder"),
        text(node, "placement"),
        text(node, "job"),
        new JobRead(
            text(node, "layout"),
            number(node, "epoch"),
            new OrderSettings(
                number(node, "seed"),
                bool(node, "shuffle"),
                Math.toIntExact(number(node, "block_rows")),
                Math.toIntExact(number(node, "window_blocks")),
                // Absent from tickets of nodes from before runs: single rows.
                node.has("run_rows") ? Math.toIntExact(number(node, "run_rows")) : 1),
            Math.toIntExact(number(node, "batch_rows")),
            TailPolicy.parse(text(node, "tail")),
            Math.toIntExact(number(node, "world_size")),
            Math.toIntExact(number(node, "rank")),
            number(node, "batch_from"),
            number(node, "batch_to"),
            number(node, "batch_step")),
        columns,
        // Absent from tickets of one global batch per record batch.
        node.has("batches_per_message") ? Math.toIntExact(number(node, "batches_per_message")) : 1,
        // Absent from tickets placed as the layout says.
        texts(node, "avoid", false));
  }

  private static List<String> texts(ObjectNode node, String name, boolean required) {
    JsonNode array = node.get(name);
    if (array == null && !required) {
      return List.of();
    }
    if (array == null || !array.isArray()) {
      throw new IllegalArgumentException("Invalid job ticket: '" + name + "' must be an array");
    }
    List<String> values = new ArrayList<>();
    array.forEach(value -> values.add(value.asText()));
    return values;
  }

  private static JsonNode field(ObjectNode node, String name) {
    JsonNode value = node.get(name);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("Invalid job ticket: missing '" + name + "'");
    }
    return value;
  }

  private static String text(ObjectNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.isTextual()) {
      throw new IllegalArgumentException("Invalid job ticket: '" + name + "' must be a string");
    }
    return value.asText();
  }

  private static long number(ObjectNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw new IllegalArgumentException("Invalid job ticket: '" + name + "' must be an integer");
    }
    return value.asLong();
  }

  private static boolean bool(ObjectNode node, String name) {
    JsonNode value = field(node, name);
    if (!value.isBoolean()) {
      throw new IllegalArgumentException("Invalid job ticket: '" + name + "' must be a boolean");
    }
    return value.asBoolean();
  }
}
