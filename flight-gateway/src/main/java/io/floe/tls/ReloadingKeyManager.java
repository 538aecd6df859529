package io.floe.tls;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's certificate and key, read again when their files change (a Kubernetes Secret or
 * cert-manager renewal rotates them in place), so that new connections get the new certificate
 * without a restart. A pair that cannot be read is logged and the last good one stays in use.
 */
public final class ReloadingKeyManager extends X509ExtendedKeyManager {
  private static final Logger LOG = LoggerFactory.getLogger(ReloadingKeyManager.class);
  private static final long CHECK_EVERY_NANOS = 1_000_000_000L;

  private final Path certFile;
  private final Path keyFile;
  private volatile Loaded current;
  private volatile long checkedAt;

  private record Loaded(X509ExtendedKeyManager keys, List<FileTime> stamps) {}

  /** Reads the pair now: a node must not start with a certificate it cannot serve. */
  public ReloadingKeyManager(Path certFile, Path keyFile) throws IOException {
    this.certFile = certFile;
    this.keyFile = keyFile;
    this.current = load();
    this.checkedAt = System.nanoTime();
  }

  private Loaded load() throws IOException {
    List<FileTime> stamps = stamps();
    X509Certificate[] chain = PemFiles.certificates(certFile);
    PrivateKey key = PemFiles.privateKey(keyFile);
    try {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      char[] password = new char[0];
      store.setKeyEntry("floe", key, password, chain);
      KeyManagerFactory factory =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      factory.init(store, password);
      return new Loaded((X509ExtendedKeyManager) factory.getKeyManagers()[0], stamps);
    } catch (GeneralSecurityException e) {
      throw new IOException(
          "The key in " + keyFile + " does not fit the certificate in " + certFile, e);
    }
  }

  private List<FileTime> stamps() throws IOException {
    return List.of(Files.getLastModifiedTime(certFile), Files.getLastModifiedTime(keyFile));
  }

  private X509ExtendedKeyManager keys() {
    long now = System.nanoTime();
    if (now - checkedAt > CHECK_EVERY_NANOS) {
      checkedAt = now;
      reloadIfChanged();
    }
    return current.keys();
  }

  private synchronized void reloadIfChanged() {
    try {
      if (!stamps().equals(current.stamps())) {
        current = load();
        LOG.info("TLS certificate reloaded from {}", certFile);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("TLS certificate not reloaded, the last one stays in use: {}", e.getMessage());
    }
  }

  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return keys().getClientAliases(keyType, issuers);
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return keys().chooseClientAlias(keyType, issuers, socket);
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    return keys().getServerAliases(keyType, issuers);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    return keys().chooseServerAlias(keyType, issuers, socket);
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return keys().chooseEngineServerAlias(keyType, issuers, engine);
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return keys().chooseEngineClientAlias(keyType, issuers, engine);
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    return current.keys().getCertificateChain(alias);
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    return current.keys().getPrivateKey(alias);
  }
}
