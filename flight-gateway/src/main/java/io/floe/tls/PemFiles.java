package io.floe.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;

/** Certificates and private keys from PEM files, as cert-manager and openssl write them. */
public final class PemFiles {
  private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String KEY_END = "-----END PRIVATE KEY-----";

  private PemFiles() {}

  /** Every certificate in the file, leaf first. */
  public static X509Certificate[] certificates(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      List<X509Certificate> certificates =
          CertificateFactory.getInstance("X.509").generateCertificates(in).stream()
              .map(X509Certificate.class::cast)
              .toList();
      if (certificates.isEmpty()) {
        throw new IOException("No certificate in " + file);
      }
      return certificates.toArray(X509Certificate[]::new);
    } catch (GeneralSecurityException e) {
      throw new IOException("Unreadable certificate file " + file + ": " + e.getMessage(), e);
    }
  }

  /** The unencrypted PKCS#8 private key (RSA or EC) in the file. */
  public static PrivateKey privateKey(Path file) throws IOException {
    String pem = Files.readString(file, StandardCharsets.US_ASCII);
    int begin = pem.indexOf(KEY_BEGIN);
    int end = pem.indexOf(KEY_END);
    if (begin < 0 || end < begin) {
      throw new IOException(
          "No unencrypted PKCS#8 private key ('"
              + KEY_BEGIN
              + "') in "
              + file
              + "; convert one with `openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8`");
    }
    byte[] der =
        Base64.getMimeDecoder().decode(pem.substring(begin + KEY_BEGIN.length(), end).strip());
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
    for (String algorithm : List.of("RSA", "EC", "Ed25519")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // not this algorithm: try the next
      }
    }
    throw new IOException("Unreadable private key in " + file + " (not RSA, EC or Ed25519)");
  }
}
