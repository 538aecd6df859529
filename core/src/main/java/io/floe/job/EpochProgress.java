package io.floe.job;

import io.floe.serialization.CborSerializable;

/** Where a dynamic-mode epoch stands: batches waiting, leased out, and acknowledged. */
public record EpochProgress(long epoch, long batches, long pending, long leased, long acknowledged)
    implements CborSerializable {}
