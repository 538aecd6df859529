package io.floe.node;

import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.management.javadsl.ManagementRouteProvider;
import org.apache.pekko.management.javadsl.ManagementRouteProviderSettings;

/**
 * {@code GET /metrics} on the management port, in Prometheus' text format, for a Prometheus server
 * or anything that scrapes it. Registered in application.conf under pekko.management.http.routes.
 */
public final class MetricsRoute implements ManagementRouteProvider {
  private final MetricsExtension metrics;

  public MetricsRoute(ExtendedActorSystem system) {
    this.metrics = MetricsExtension.get(system);
  }

  @Override
  public Route routes(ManagementRouteProviderSettings settings) {
    return Directives.path(
        "metrics",
        () ->
            Directives.get(
                () -> {
                  NodeMetrics node = metrics.metrics();
                  return node == null
                      ? Directives.complete(
                          org.apache.pekko.http.javadsl.model.StatusCodes.SERVICE_UNAVAILABLE,
                          "The node's meters are not installed yet")
                      : Directives.complete(
                          HttpEntities.create(ContentTypes.TEXT_PLAIN_UTF8, node.scrape()));
                }));
  }
}
