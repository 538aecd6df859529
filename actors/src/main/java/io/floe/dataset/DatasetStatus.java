package io.floe.dataset;

import io.floe.serialization.CborSerializable;
import io.floe.spec.TableSource;
import io.floe.tenant.Owner;
import java.util.List;

/**
 * A dataset's progress as clients see it through {@code status} and {@code list}.
 *
 * @param source where its table came from, once planned; else null
 * @param failure why it FAILED, or null
 * @param snapshotId the snapshot it serves; null before its table is planned
 * @param secondsToReady seconds from the load request to READY; null before that
 * @param decoders how many held slices each reader decoded: native, vectorized, generic, mixed
 * @param refresh its last refresh, or null
 * @param retained older layouts kept for the jobs that still read them
 * @param owner who loaded it (null for a dataset loaded before owners were kept, and for an absent
 *     one)
 * @param replicas how many nodes hold each slice (0 for an absent dataset)
 */
public record DatasetStatus(
    String name,
    TableSource source,
    DatasetState state,
    int slicesLoaded,
    int slicesTotal,
    long rows,
    long bytes,
    Long snapshotId,
    Failure failure,
    Double secondsToReady,
    java.util.Map<String, Integer> decoders,
    RefreshReport refresh,
    List<RetainedLayout> retained,
    Owner owner,
    int replicas)
    implements CborSerializable {
  public DatasetStatus {
    retained = retained == null ? List.of() : List.copyOf(retained);
    decoders = decoders == null ? java.util.Map.of() : java.util.Map.copyOf(decoders);
  }

  /**
   * A dataset its record says was loaded whose entity has not answered yet since the cluster
   * started again: planning its recovery, at the snapshot it served.
   */
  public static DatasetStatus recovering(String name, DatasetRecord record) {
    return planning(
        name,
        record.snapshotId() < 0 ? null : record.snapshotId(),
        record.owner(),
        record.spec().replicas());
  }

  /** A dataset planning its table (at {@code snapshotId} when it is known): nothing loaded yet. */
  static DatasetStatus planning(String name, Long snapshotId, Owner owner, int replicas) {
    return new DatasetStatus(
        name,
        null,
        DatasetState.PLANNING,
        0,
        0,
        0,
        0,
        snapshotId,
        null,
        null,
        null,
        null,
        List.of(),
        owner,
        replicas);
  }

  public static DatasetStatus absent(String name) {
    return new DatasetStatus(
        name,
        null,
        DatasetState.ABSENT,
        0,
        0,
        0,
        0,
        null,
        null,
        null,
        null,
        null,
        List.of(),
        null,
        0);
  }

  /**
   * An older layout a job still reads: its snapshot, fingerprint (once known), size and readers.
   */
  public record RetainedLayout(
      long snapshotId, String fingerprint, int slices, long rows, List<String> heldBy)
      implements CborSerializable {
    public RetainedLayout {
      heldBy = List.copyOf(heldBy);
    }
  }
}
