package io.floe.resources;

import io.floe.iceberg.SliceLoadListener;
import io.floe.iceberg.SliceLoader;
import io.floe.store.SliceStore;
import java.util.concurrent.Executor;

/**
 * What a slice entity needs from the node that hosts it: the loader and the threads it decodes on,
 * the store its batches are served from, where readers reach this node, the retirement that frees a
 * slice that moved away, and who hears how loads went.
 */
public record SliceHosting(
    SliceLoader loader,
    Executor loadExecutor,
    SliceStore store,
    AdvertisedLocation location,
    Retirement retirement,
    SliceLoadListener loadListener) {}
