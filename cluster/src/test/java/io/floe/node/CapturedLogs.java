package io.floe.node;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.LoggerFactory;

/**
 * What Floe's loggers write while it is open, at every level, through a logback appender of its own
 * (a node started in the test's JVM logs here). Restores the level when closed.
 */
final class CapturedLogs extends AppenderBase<ILoggingEvent> implements AutoCloseable {
  private final Logger floe = (Logger) LoggerFactory.getLogger("io.floe");
  private final Level level = floe.getLevel();
  private final ConcurrentLinkedQueue<ILoggingEvent> events = new ConcurrentLinkedQueue<>();

  private CapturedLogs() {
    setContext(floe.getLoggerContext());
    setName("captured-logs");
    start();
    floe.addAppender(this);
    floe.setLevel(Level.DEBUG);
  }

  static CapturedLogs open() {
    return new CapturedLogs();
  }

  @Override
  protected void append(ILoggingEvent event) {
    events.add(event);
  }

  /** Every line so far, as written (arguments in place; a stack trace is not part of it). */
  List<String> lines() {
    return events.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
  }

  /** The lines at INFO or above. */
  List<String> operatorLines() {
    return events.stream()
        .filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
        .map(e -> e.getLevel() + " " + e.getFormattedMessage())
        .toList();
  }

  @Override
  public void close() {
    floe.setLevel(level);
    floe.detachAppender(this);
    stop();
  }
}
