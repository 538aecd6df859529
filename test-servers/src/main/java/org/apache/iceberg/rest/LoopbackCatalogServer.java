package org.apache.iceberg.rest;

import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Iceberg's REST catalog server (the one Iceberg publishes as test fixtures, with its adapter that
 * vends storage credentials when {@code include-credentials} is true), listening on 127.0.0.1 only:
 * the stock {@code RESTCatalogServer.main} binds every interface. In this package because the
 * fixtures' adapter and context are package-private.
 *
 * <p>Properties of the catalog behind it come as {@code key=value} arguments ({@code
 * warehouse=s3://bucket/wh}, {@code uri=jdbc:sqlite:/tmp/cat.db}, {@code s3.endpoint=...}); it
 * defaults to a JDBC catalog in an in-memory SQLite database. {@code port=0} picks a free port. It
 * prints {@code LISTENING <port>} on standard output once it serves, and runs until killed.
 */
public final class LoopbackCatalogServer {
  private LoopbackCatalogServer() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> properties = new HashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("Expected key=value, got '" + arg + "'");
      }
      properties.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    int port = Integer.parseInt(properties.getOrDefault("port", "0"));
    properties.remove("port");
    properties.putIfAbsent(CatalogProperties.CATALOG_IMPL, JdbcCatalog.class.getName());
    properties.putIfAbsent(CatalogProperties.URI, "jdbc:sqlite::memory:");
    properties.putIfAbsent("jdbc.schema-version", "V1");
    Catalog backend =
        CatalogUtil.buildIcebergCatalog("rest_backend", properties, new Configuration());

    RESTCatalogAdapter adapter =
        new RESTServerCatalogAdapter(new RESTCatalogServer.CatalogContext(backend, properties));
    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(adapter)), "/*");

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(port);
    server.addConnector(connector);
    server.setHandler(context);
    server.start();
    int bound = connector.getLocalPort();
    System.out.println("LISTENING " + bound);
    System.out.flush();
    server.join();
  }
}
