package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import org.junit.jupiter.api.Test;

class SeverityJsonProviderTest {
  @Test
  void logbackLevelsBecomeCloudLoggingSeverities() {
    assertThat(SeverityJsonProvider.severity(Level.ERROR)).isEqualTo("ERROR");
    assertThat(SeverityJsonProvider.severity(Level.WARN)).isEqualTo("WARNING");
    assertThat(SeverityJsonProvider.severity(Level.INFO)).isEqualTo("INFO");
    assertThat(SeverityJsonProvider.severity(Level.DEBUG)).isEqualTo("DEBUG");
    assertThat(SeverityJsonProvider.severity(Level.TRACE)).isEqualTo("DEBUG");
  }
}
