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
import java.util.HexFormat;
import java.util.List;

/**
 * Certificates and private keys from PEM files, as cert-manager, openssl and Helm's {@code
 * genSignedCert} write them: keys in unencrypted PKCS#8, or RSA keys in PKCS#1 (cert-manager's
 * default encoding and Helm's only one), which Pekko's TLS transport reads as well.
 */
public final class PemFiles {
  private static final String KEY_BEGIN = "-----BEGIN PRIVATE KEY-----";
  private static final String KEY_END = "-----END PRIVATE KEY-----";
  private static final String RSA_KEY_BEGIN = "-----BEGIN RSA PRIVATE KEY-----";
  private static final String RSA_KEY_END = "-----END RSA PRIVATE KEY-----";

  /** PKCS#8's version 0 and AlgorithmIdentifier {rsaEncryption, NULL}, DER-encoded. */
  private static final byte[] RSA_PKCS8_PREFIX =
      HexFormat.of().parseHex("020100" + "300d06092a864886f70d0101010500");

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

  /** The unencrypted private key in the file: PKCS#8 (RSA, EC or Ed25519) or PKCS#1 (RSA). */
  public static PrivateKey privateKey(Path file) throws IOException {
    String pem = Files.readString(file, StandardCharsets.US_ASCII);
    byte[] der = block(pem, KEY_BEGIN, KEY_END);
    if (der == null) {
      byte[] rsa = block(pem, RSA_KEY_BEGIN, RSA_KEY_END);
      if (rsa == null) {
        throw new IOException(
            "No unencrypted private key ('"
                + KEY_BEGIN
                + "' or '"
                + RSA_KEY_BEGIN
                + "') in "
                + file
                + "; convert one with `openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8`");
      }
      der = pkcs8OfPkcs1(rsa);
    }
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

  /** The DER bytes between the markers; null without them. Encrypted PEM (headers) fails. */
  private static byte[] block(String pem, String beginMarker, String endMarker) throws IOException {
    int begin = pem.indexOf(beginMarker);
    int end = pem.indexOf(endMarker);
    if (begin < 0 || end < begin) {
      return null;
    }
    String body = pem.substring(begin + beginMarker.length(), end).strip();
    if (body.contains(":")) {
      throw new IOException(
          "The private key is encrypted (" + body.lines().findFirst().get() + ")");
    }
    return Base64.getMimeDecoder().decode(body);
  }

  /**
   * A PKCS#1 RSAPrivateKey wrapped as PKCS#8's PrivateKeyInfo, which the JDK's KeyFactory reads.
   */
  static byte[] pkcs8OfPkcs1(byte[] pkcs1) {
    byte[] key = der(0x04, pkcs1);
    byte[] info = new byte[RSA_PKCS8_PREFIX.length + key.length];
    System.arraycopy(RSA_PKCS8_PREFIX, 0, info, 0, RSA_PKCS8_PREFIX.length);
    System.arraycopy(key, 0, info, RSA_PKCS8_PREFIX.length, key.length);
    return der(0x30, info);
  }

  /** A DER element: tag, definite length (short or long form), contents. */
  private static byte[] der(int tag, byte[] contents) {
    int length = contents.length;
    int lengthBytes = length < 0x80 ? 0 : (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
    byte[] element = new byte[2 + lengthBytes + length];
    element[0] = (byte) tag;
    if (lengthBytes == 0) {
      element[1] = (byte) length;
    } else {
      element[1] = (byte) (0x80 | lengthBytes);
      for (int i = 0; i < lengthBytes; i++) {
        element[2 + i] = (byte) (length >>> (8 * (lengthBytes - 1 - i)));
      }
    }
    System.arraycopy(contents, 0, element, 2 + lengthBytes, length);
    return element;
  }
}
