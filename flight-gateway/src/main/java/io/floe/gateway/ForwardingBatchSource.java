package io.floe.gateway;

/**
 * A source that passes every call on to another: a wrapper overrides only what it adds (a watch on
 * the slices it reads, a test's hooks).
 */
public abstract class ForwardingBatchSource implements BatchSource {
  private final BatchSource source;

  protected ForwardingBatchSource(BatchSource source) {
    this.source = source;
  }

  /** The source calls are passed on to. */
  protected final BatchSource source() {
    return source;
  }

  @Override
  public FlightFrame schema() {
    return source.schema();
  }

  @Override
  public FlightFrame next() {
    return source.next();
  }

  @Override
  public boolean withdrawn() {
    return source.withdrawn();
  }

  @Override
  public void close() {
    source.close();
  }
}
