package io.floe.tls;

import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * TLS for a node's Flight server: its certificate and key (PEM, reloaded when they change) and, for
 * mutual TLS, the CAs whose client certificates it accepts.
 *
 * @param clientCaFile empty: clients are not asked for a certificate
 */
public record ServerTls(Path certFile, Path keyFile, Optional<Path> clientCaFile) {
  public ServerTls {
    if (certFile == null || keyFile == null) {
      throw new IllegalArgumentException("TLS needs both a certificate file and a key file");
    }
  }

  /** The SSL context for gRPC (JDK provider: the tcnative OpenSSL jars are not shipped). */
  public SslContext sslContext() throws IOException {
    SslContextBuilder builder =
        GrpcSslContexts.configure(
            SslContextBuilder.forServer(new ReloadingKeyManager(certFile, keyFile)),
            SslProvider.JDK);
    if (clientCaFile.isPresent()) {
      builder
          .trustManager(PemFiles.certificates(clientCaFile.get()))
          .clientAuth(ClientAuth.REQUIRE);
    }
    return builder.build();
  }
}
