package io.floe.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.client.FloeClient;
import io.floe.protocol.LoadRequest;
import io.floe.spec.DatasetSpec;
import io.floe.testing.IcebergTestTables;
import io.floe.testing.TestRows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node serving Flight over mutual TLS with certificates made by openssl: clients that trust its
 * CA and present a certificate of the client CA plan and read; plaintext clients, clients without a
 * certificate and clients that trust another CA are refused; a renewed certificate written over the
 * old files is served to new connections without a restart.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsTest {
  private FloeNode node;
  private BufferAllocator allocator;
  private TestCertificates serverCa;
  private TestCertificates otherCa;
  private TestCertificates.Pair client;
  private Path serverCert;
  private Path serverKey;
  private Path dir;

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    this.dir = dir;
    IcebergTestTables.TestTable table =
        IcebergTestTables.in(dir)
            .create("events", TestRows.EVENTS)
            .appendFiles(2, 500, TestRows.events(2));
    serverCa = TestCertificates.authority(dir, "server-ca");
    otherCa = TestCertificates.authority(dir, "other-ca");
    TestCertificates clientCa = TestCertificates.authority(dir, "client-ca");
    TestCertificates.Pair server = serverCa.issue("node", true);
    client = clientCa.issue("trainer", false);
    serverCert = dir.resolve("tls.crt");
    serverKey = dir.resolve("tls.key");
    Files.copy(server.cert(), serverCert);
    Files.copy(server.key(), serverKey);
    node =
        TestNodes.start(
            "floe.security.tls.cert-file = \""
                + serverCert
                + "\"\nfloe.security.tls.key-file = \""
                + serverKey
                + "\"\nfloe.security.tls.client-ca-file = \""
                + clientCa.cert()
                + "\"\n");
    allocator = new RootAllocator();
    try (FloeClient trusted = trusting(serverCa.cert())) {
      trusted.load(new LoadRequest(DatasetSpec.of("events", table.metadataLocation()), true));
    }
  }

  @AfterAll
  void stop() throws Exception {
    allocator.close();
    node.close();
  }

  private FloeClient trusting(Path ca) {
    return FloeClient.builder(allocator, node.location())
        .trustedCertificates(ca)
        .clientCertificate(client.cert(), client.key())
        .build();
  }

  @Test
  void theNodeAdvertisesTlsAndServesTrustedClients() throws Exception {
    assertThat(node.location().getUri().getScheme()).isEqualTo("grpc+tls");
    try (FloeClient trusted = trusting(serverCa.cert())) {
      long rows = trusted.readShard("events", 0, 1, Duration.ofSeconds(30), batch -> {});
      assertThat(rows).isEqualTo(1_000);
      // Endpoints name the node's grpc+tls location, so reads stay on TLS.
      assertThat(trusted.plan("events", 0, 1).getEndpoints())
          .allSatisfy(
              e -> assertThat(e.getLocations().get(0).getUri().getScheme()).isEqualTo("grpc+tls"));
    }
  }

  @Test
  void plaintextClientsAreRefused() throws Exception {
    Location plain = Location.forGrpcInsecure("127.0.0.1", node.location().getUri().getPort());
    try (FloeClient insecure = FloeClient.connect(allocator, plain)) {
      assertThatThrownBy(insecure::list).isInstanceOf(FlightRuntimeException.class);
    }
  }

  @Test
  void clientsWithoutACertificateAreRefused() throws Exception {
    try (FloeClient anonymous =
        FloeClient.builder(allocator, node.location())
            .trustedCertificates(serverCa.cert())
            .build()) {
      assertThatThrownBy(anonymous::list).isInstanceOf(FlightRuntimeException.class);
    }
  }

  @Test
  void clientsThatTrustAnotherCaDoNotConnect() throws Exception {
    try (FloeClient wrong = trusting(otherCa.cert())) {
      assertThatThrownBy(wrong::list).isInstanceOf(FlightRuntimeException.class);
    }
  }

  @Test
  void aRenewedCertificateIsServedWithoutARestart() throws Exception {
    TestCertificates renewedCa = TestCertificates.authority(dir, "renewed-ca");
    TestCertificates.Pair renewed = renewedCa.issue("node-renewed", true);
    try {
      Files.copy(renewed.key(), serverKey, StandardCopyOption.REPLACE_EXISTING);
      Files.copy(renewed.cert(), serverCert, StandardCopyOption.REPLACE_EXISTING);
      Awaitility.await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                try (FloeClient fresh = trusting(renewedCa.cert())) {
                  assertThat(fresh.list()).isNotNull();
                }
              });
    } finally {
      TestCertificates.Pair original =
          new TestCertificates.Pair(dir.resolve("node.crt"), dir.resolve("node.key"));
      Files.copy(original.key(), serverKey, StandardCopyOption.REPLACE_EXISTING);
      Files.copy(original.cert(), serverCert, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  @Test
  void flightClientsOfArrowItselfConnectWithTheCaBundle() throws Exception {
    try (var in = Files.newInputStream(serverCa.cert());
        var cert = Files.newInputStream(client.cert());
        var key = Files.newInputStream(client.key());
        FlightClient flight =
            FlightClient.builder(allocator, node.location())
                .trustedCertificates(in)
                .clientCertificate(cert, key)
                .build()) {
      assertThat(flight.listActions()).isNotEmpty();
    }
  }
}
