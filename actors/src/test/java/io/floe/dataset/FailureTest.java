package io.floe.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.error.ErrorKind;
import io.floe.spec.InvalidSpecException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** A plan's or a slice's failure is what its {@code FloeException} says, or INTERNAL. */
class FailureTest {
  @Test
  void anArgumentErrorFromInsideALibraryIsInternal() {
    Failure failure =
        Failure.of(
            new CompletionException(
                new IllegalArgumentException("Cannot explicitly project List or Map types")));

    assertThat(failure)
        .isEqualTo(new Failure(ErrorKind.INTERNAL, "Cannot explicitly project List or Map types"));
  }

  @Test
  void floesOwnRefusalKeepsItsKind() {
    assertThat(Failure.of(new CompletionException(new InvalidSpecException("Unknown column 'x'"))))
        .isEqualTo(new Failure(ErrorKind.INVALID_ARGUMENT, "Unknown column 'x'"));
  }

  @Test
  void aFailureWithoutAMessageIsNamedByItsClass() {
    assertThat(Failure.of(new NullPointerException()).message())
        .isEqualTo(NullPointerException.class.getName());
  }
}
