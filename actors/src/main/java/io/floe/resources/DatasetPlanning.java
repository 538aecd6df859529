package io.floe.resources;

import io.floe.iceberg.SlicePlanner;
import io.floe.table.TableAccess;
import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * What a dataset entity needs from its node: its tables, the planner that cuts a snapshot into
 * slices, the threads planning runs on, how many of its slices load at once, how long a replaced
 * layout lingers for readers still on it, and the data nodes' free memory a load must fit in.
 */
public record DatasetPlanning(
    TableAccess tables,
    SlicePlanner planner,
    Executor loadExecutor,
    int loadsPerDataset,
    Duration retireLinger,
    ClusterMemory memory) {}
