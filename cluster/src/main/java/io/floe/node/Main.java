package io.floe.node;

import com.typesafe.config.ConfigFactory;

/** Starts a data node from application.conf and the environment; SIGTERM shuts it down in order. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    // gRPC logs through java.util.logging; send it to logback with the rest.
    org.slf4j.bridge.SLF4JBridgeHandler.removeHandlersForRootLogger();
    org.slf4j.bridge.SLF4JBridgeHandler.install();
    FloeNode node = FloeNode.start(ConfigFactory.load());
    node.whenClosed().join();
  }
}
