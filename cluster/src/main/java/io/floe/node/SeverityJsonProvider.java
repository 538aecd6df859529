package io.floe.node;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import net.logstash.logback.composite.AbstractFieldJsonProvider;

/**
 * Writes a JSON log line's level a second time as {@code severity}, in the names Google Cloud
 * Logging reads from that field (WARNING, not logback's WARN), so that a node's lines get their
 * severity there without a parsing rule; {@code level} keeps logback's names for Loki and Elastic.
 */
public final class SeverityJsonProvider extends AbstractFieldJsonProvider<ILoggingEvent> {
  public SeverityJsonProvider() {
    setFieldName("severity");
  }

  @Override
  public void writeTo(JsonGenerator generator, ILoggingEvent event) throws IOException {
    generator.writeStringField(getFieldName(), severity(event.getLevel()));
  }

  static String severity(Level level) {
    return switch (level.toInt()) {
      case Level.ERROR_INT -> "ERROR";
      case Level.WARN_INT -> "WARNING";
      case Level.INFO_INT -> "INFO";
      default -> "DEBUG";
    };
  }
}
