package io.floe.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/** Starts single data nodes on 127.0.0.1 with free ports, for tests. */
final class TestNodes {
  /** The ticket secret test nodes share, so tests can sign (and forge) tickets. */
  static final String TICKET_SECRET = "test-ticket-secret-0123456789";

  private TestNodes() {}

  static FloeNode start(String overrides) {
    Config config =
        ConfigFactory.parseString(overrides)
            .withFallback(
                ConfigFactory.parseString(
                    "floe.flight.port = 0\n"
                        + "floe.management.enabled = false\n"
                        + "floe.security.ticket-secret = \""
                        + TICKET_SECRET
                        + "\"\n"
                        + "floe.flight.bind-host = 127.0.0.1\n"
                        // Tests of other things need no tokens; AuthenticationTest sets its own.
                        + "floe.security.auth.anonymous = operator\n"
                        + "floe.security.allowed-locations = \"*\"\n"
                        + "floe.load.slice-target-size = 16KiB\n"
                        + "floe.load.threads = 2\n"
                        // Tests start many nodes; ServingWarmupTest covers the warm-up.
                        + "floe.gateway.warm-up = 0s\n"
                        + "pekko.remote.artery.canonical.hostname = 127.0.0.1\n"
                        + "pekko.remote.artery.canonical.port = 0\n"
                        // Every message between actors goes through its serializer, as it
                        // would between nodes: one that cannot fails the test that sends it.
                        + "pekko.actor.serialize-messages = on\n"))
            .withFallback(ConfigFactory.load());
    return FloeNode.start(config);
  }

  static FloeNode start() {
    return start("");
  }
}
