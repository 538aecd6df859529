package io.floe.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PreconditionsTest {
  @Test
  void messagesReadAsGuavasDo() {
    assertThat(Preconditions.format("Invalid batch_rows: %s (must be > %s)", 0, 0))
        .isEqualTo("Invalid batch_rows: 0 (must be > 0)");
    assertThat(Preconditions.format("no placeholders", 1, "x")).isEqualTo("no placeholders [1, x]");
    assertThat(Preconditions.format("%s and %s", "one")).isEqualTo("one and %s");
    assertThat(Preconditions.format("literal %d stays", 3)).isEqualTo("literal %d stays [3]");
  }

  @Test
  void failuresHaveTheirExceptionTypes() {
    Preconditions.checkArgument(true, "never");
    assertThatThrownBy(() -> Preconditions.checkArgument(false, "Invalid epoch: %s", -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Invalid epoch: -1");
    assertThatThrownBy(() -> Preconditions.checkState(false, "closed"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("closed");
    assertThat(Preconditions.checkNotNull("x", "x")).isEqualTo("x");
    assertThatThrownBy(() -> Preconditions.checkNotNull(null, "%s is null", "spec"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("spec is null");
  }
}
