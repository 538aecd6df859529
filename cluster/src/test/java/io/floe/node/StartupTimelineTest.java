package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The start's steps as the node logs them and ./floe bench-start parses them. */
class StartupTimelineTest {
  private static final Pattern LINE =
      Pattern.compile(
          "([0-9]+\\.[0-9]{3}) s after its process started: (launcher [0-9.]+ s, )?"
              + "jvm ([0-9.]+) s, config ([0-9.]+) s, actor system ([0-9.]+) s");

  @Test
  void stepsAreTimedInOrderFromTheProcessStartAndAddUpToIt() {
    StartupTimeline timeline = StartupTimeline.begin();
    timeline.step("config");
    timeline.step("actor system");

    String summary = timeline.summary();
    Matcher matcher = LINE.matcher(summary);
    assertThat(matcher.matches()).as(summary).isTrue();
    double total = Double.parseDouble(matcher.group(1));
    double steps =
        Double.parseDouble(matcher.group(3))
            + Double.parseDouble(matcher.group(4))
            + Double.parseDouble(matcher.group(5))
            + (matcher.group(2) == null
                ? 0
                : Double.parseDouble(matcher.group(2).replaceAll("[^0-9.]", "")));
    // The JVM has run for a while already in this test; each step is rounded to a millisecond.
    assertThat(total).isPositive().isCloseTo(steps, org.assertj.core.data.Offset.offset(0.01));
  }
}
