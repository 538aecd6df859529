package io.floe.ticket;

import io.floe.job.JobRead;
import io.floe.job.JobSpec;
import io.floe.job.OrderSettings;
import io.floe.job.TailPolicy;
import io.floe.spec.DatasetSpec;
import io.floe.util.Preconditions;
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
  private static final TicketField<JobTicket, String> DATASET =
      TicketField.text("dataset", JobTicket::dataset);
  private static final TicketField<JobTicket, String> HOLDER =
      TicketField.text("holder", JobTicket::holder);
  private static final TicketField<JobTicket, String> PLACEMENT =
      TicketField.text("placement", JobTicket::placement);
  private static final TicketField<JobTicket, String> JOB = TicketField.text("job", JobTicket::job);
  private static final TicketField<JobTicket, String> LAYOUT =
      TicketField.text("layout", t -> t.read().layout());
  private static final TicketField<JobTicket, Long> EPOCH =
      TicketField.int64("epoch", t -> t.read().epoch());
  private static final TicketField<JobTicket, Long> SEED =
      TicketField.int64("seed", t -> t.read().order().seed());
  private static final TicketField<JobTicket, Boolean> SHUFFLE =
      TicketField.bool("shuffle", t -> t.read().order().shuffle());
  private static final TicketField<JobTicket, Integer> BLOCK_ROWS =
      TicketField.int32("block_rows", t -> t.read().order().blockRows());
  private static final TicketField<JobTicket, Integer> WINDOW_BLOCKS =
      TicketField.int32("window_blocks", t -> t.read().order().windowBlocks());
  // Single rows, the only unit before runs existed, by default.
  private static final TicketField<JobTicket, Integer> RUN_ROWS =
      TicketField.<JobTicket>int32("run_rows", t -> t.read().order().runRows()).byDefault(1);
  private static final TicketField<JobTicket, Integer> BATCH_ROWS =
      TicketField.int32("batch_rows", t -> t.read().batchRows());
  private static final TicketField<JobTicket, String> TAIL =
      TicketField.text("tail", t -> t.read().tail().wireName());
  private static final TicketField<JobTicket, List<String>> COLUMNS =
      TicketField.texts("columns", JobTicket::columns);
  private static final TicketField<JobTicket, Integer> WORLD_SIZE =
      TicketField.int32("world_size", t -> t.read().worldSize());
  private static final TicketField<JobTicket, Integer> RANK =
      TicketField.int32("rank", t -> t.read().rank());
  private static final TicketField<JobTicket, Long> BATCH_FROM =
      TicketField.int64("batch_from", t -> t.read().batchFrom());
  private static final TicketField<JobTicket, Long> BATCH_TO =
      TicketField.int64("batch_to", t -> t.read().batchTo());
  private static final TicketField<JobTicket, Long> BATCH_STEP =
      TicketField.int64("batch_step", t -> t.read().batchStep());
  private static final TicketField<JobTicket, Integer> BATCHES_PER_MESSAGE =
      TicketField.int32("batches_per_message", JobTicket::batchesPerMessage).byDefault(1);
  // Absent from tickets placed as the layout says.
  private static final TicketField<JobTicket, List<String>> AVOID =
      TicketField.texts("avoid", JobTicket::avoid).byDefault(List.of());

  /**
   * The wire form: flat, the read's fields beside the ticket's own. A field with a default is left
   * out while it has it, so a node that knows nothing of runs, grouping or avoiding refuses only
   * the tickets that use them.
   */
  static final TicketCodec<JobTicket> CODEC =
      new TicketCodec<>(
          "job",
          List.of(
              DATASET,
              HOLDER,
              PLACEMENT,
              JOB,
              LAYOUT,
              EPOCH,
              SEED,
              SHUFFLE,
              BLOCK_ROWS,
              WINDOW_BLOCKS,
              RUN_ROWS,
              BATCH_ROWS,
              TAIL,
              COLUMNS,
              WORLD_SIZE,
              RANK,
              BATCH_FROM,
              BATCH_TO,
              BATCH_STEP,
              BATCHES_PER_MESSAGE,
              AVOID),
          node ->
              new JobTicket(
                  DATASET.read(node),
                  HOLDER.read(node),
                  PLACEMENT.read(node),
                  JOB.read(node),
                  new JobRead(
                      LAYOUT.read(node),
                      EPOCH.read(node),
                      new OrderSettings(
                          SEED.read(node),
                          SHUFFLE.read(node),
                          BLOCK_ROWS.read(node),
                          WINDOW_BLOCKS.read(node),
                          RUN_ROWS.read(node)),
                      BATCH_ROWS.read(node),
                      TailPolicy.parse(TAIL.read(node)),
                      WORLD_SIZE.read(node),
                      RANK.read(node),
                      BATCH_FROM.read(node),
                      BATCH_TO.read(node),
                      BATCH_STEP.read(node)),
                  COLUMNS.read(node),
                  BATCHES_PER_MESSAGE.read(node),
                  AVOID.read(node)));

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
}
