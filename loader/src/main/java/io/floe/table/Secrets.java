package io.floe.table;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Which property values must never be shown: keys, secrets, tokens, passwords. */
final class Secrets {
  private static final String[] MARKERS = {
    "secret", "password", "token", "key", "credential", "sas", "connection-string", "auth"
  };

  private Secrets() {}

  static boolean isSecret(String property) {
    String lower = property.toLowerCase(Locale.ROOT);
    for (String marker : MARKERS) {
      if (lower.contains(marker)) {
        return true;
      }
    }
    return false;
  }

  /** The properties with secret values replaced, sorted, for logs and {@code toString}. */
  static Map<String, String> redacted(Map<String, String> properties) {
    Map<String, String> shown = new TreeMap<>();
    properties.forEach((k, v) -> shown.put(k, isSecret(k) ? "(hidden)" : v));
    return shown;
  }
}
