package io.floe.node;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;

/**
 * How long each step of a node's start took, from the start of its process (the launcher's, as
 * {@code ./floe node} execs the JVM in the same process) to serving. Logged once at INFO when the
 * node serves, and read by {@code ./floe bench-start} (python/benchmarks/start.py), which parses
 * the line: keep its shape ("step 0.123 s" separated by commas).
 *
 * <p>Not thread-safe: the start runs on one thread; steps that complete on others (the cluster
 * member coming Up) are reported separately by {@link #since()}.
 */
final class StartupTimeline {
  private final long processStartMillis;
  private final long jvmStartMillis;
  private final List<String> steps = new ArrayList<>();
  private long lastMillis;

  private StartupTimeline(long processStartMillis, long jvmStartMillis, long nowMillis) {
    this.processStartMillis = processStartMillis;
    this.jvmStartMillis = jvmStartMillis;
    this.lastMillis = jvmStartMillis;
    if (processStartMillis < jvmStartMillis) {
      steps.add(format("launcher", jvmStartMillis - processStartMillis));
    }
    step("jvm", nowMillis);
  }

  /** A timeline whose first steps are the launcher (process start to JVM start) and the JVM. */
  static StartupTimeline begin() {
    long jvm = ManagementFactory.getRuntimeMXBean().getStartTime();
    long now = System.currentTimeMillis();
    return new StartupTimeline(Math.min(jvm, now - processAgeMillis(now - jvm)), jvm, now);
  }

  /**
   * How long ago this process started ({@code ./floe node} execs the JVM in its own process, so
   * this includes the launcher), from /proc: the process's start in clock ticks (100 a second on
   * Linux) since boot against the system's uptime, both to 10 ms. Elsewhere the JVM's age.
   */
  private static long processAgeMillis(long jvmAgeMillis) {
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"));
      // Fields after the command name (in parentheses, which may hold spaces): the 22nd field of
      // the line, starttime, is the 20th after it.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long startTicks = Long.parseLong(fields[19]);
      String uptime = Files.readString(Path.of("/proc/uptime")).split(" ")[0];
      long age = Math.round(Double.parseDouble(uptime) * 1000) - startTicks * 10;
      return age >= 0 ? age : jvmAgeMillis;
    } catch (IOException | RuntimeException e) {
      return jvmAgeMillis;
    }
  }

  /** Ends the step {@code name} now. */
  void step(String name) {
    step(name, System.currentTimeMillis());
  }

  private void step(String name, long nowMillis) {
    steps.add(format(name, nowMillis - lastMillis));
    lastMillis = nowMillis;
  }

  /** Seconds from the process start to now. */
  String since() {
    return seconds(System.currentTimeMillis() - processStartMillis);
  }

  /** "2.41 s after its process started: launcher 0.05 s, jvm 0.40 s, ...". */
  String summary() {
    StringJoiner joined = new StringJoiner(", ");
    steps.forEach(joined::add);
    return since() + " after its process started: " + joined;
  }

  private static String format(String name, long millis) {
    return name + " " + seconds(millis);
  }

  private static String seconds(long millis) {
    return String.format(Locale.ROOT, "%.3f s", millis / 1000.0);
  }
}
