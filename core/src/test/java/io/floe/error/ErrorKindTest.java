package io.floe.error;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ErrorKindTest {
  @Test
  void onlyTheStoreBeingAwayAndTheNodeFailingAreWorthRetrying() {
    for (ErrorKind kind : ErrorKind.values()) {
      assertThat(kind.retryable())
          .as("%s", kind)
          .isEqualTo(kind == ErrorKind.STORAGE_UNAVAILABLE || kind == ErrorKind.INTERNAL);
    }
  }

  @Test
  void noRetryableKindIsTheCallersFault() {
    for (ErrorKind kind : ErrorKind.values()) {
      assertThat(kind.retryable() && kind.callersFault()).as("%s", kind).isFalse();
    }
  }

  @Test
  void theExceptionCarriesItsKindAndMessage() {
    FloeException e = new FloeException(ErrorKind.NOT_OWNER, "dataset 'x' is tenant a's");
    assertThat(e.kind()).isEqualTo(ErrorKind.NOT_OWNER);
    assertThat(e).hasMessage("dataset 'x' is tenant a's").hasNoCause();
  }
}
