package io.floe.job;

import io.floe.serialization.CborSerializable;

/** What, with the dataset's layout and the epoch, fixes the order of an epoch's rows. */
public record OrderSettings(long seed, boolean shuffle, int blockRows, int windowBlocks)
    implements CborSerializable {}
