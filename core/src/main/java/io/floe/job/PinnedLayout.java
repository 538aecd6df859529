package io.floe.job;

import io.floe.serialization.CborSerializable;

/**
 * The dataset layout a job was registered against: its snapshot, the fingerprint of its slices and
 * their rows, and the row count. Reads of the job check the dataset still has this layout, since
 * the job's order is a function of it.
 */
public record PinnedLayout(long snapshotId, String fingerprint, long rows)
    implements CborSerializable {}
