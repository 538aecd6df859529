package io.floe.dataset;

import io.floe.serialization.CborSerializable;

/**
 * The last refresh of a dataset: from which snapshot to which, how many slices it kept loaded,
 * loaded anew and freed, and how it ended.
 *
 * @param state RUNNING, DONE (the new layout serves), UNCHANGED (no newer snapshot) or FAILED
 * @param toSnapshot the snapshot it moves to; null while it is RUNNING or when it FAILED
 * @param freed slices of the replaced layout freed (after the retire linger), or to be freed;
 *     slices a job's epoch still reads are freed once it moves on
 * @param failure why it FAILED, or null; the dataset goes on serving the old layout
 */
public record RefreshReport(
    String state,
    long fromSnapshot,
    Long toSnapshot,
    int kept,
    int loaded,
    int freed,
    double seconds,
    Failure failure)
    implements CborSerializable {
  public static final String RUNNING = "RUNNING";
  public static final String DONE = "DONE";
  public static final String UNCHANGED = "UNCHANGED";
  public static final String FAILED = "FAILED";
}
