package io.floe.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node reads an RSA key in PKCS#1 ("RSA PRIVATE KEY", what Helm's genSignedCert and
 * cert-manager's default encoding write) as the same key as its PKCS#8 form, with openssl making
 * both from one key.
 */
class PemFilesTest {
  @TempDir Path dir;

  @Test
  void aPkcs1RsaKeyReadsAsTheSameKeyAsItsPkcs8Form() throws Exception {
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "pk8.pem");
    openssl("rsa", "-in", "pk8.pem", "-traditional", "-out", "pk1.pem");
    assertThat(Files.readString(dir.resolve("pk1.pem")))
        .startsWith("-----BEGIN RSA PRIVATE KEY-----");
    assertThat(Files.readString(dir.resolve("pk8.pem"))).startsWith("-----BEGIN PRIVATE KEY-----");

    PrivateKey pkcs1 = PemFiles.privateKey(dir.resolve("pk1.pem"));
    PrivateKey pkcs8 = PemFiles.privateKey(dir.resolve("pk8.pem"));

    assertThat(pkcs1.getAlgorithm()).isEqualTo("RSA");
    assertThat(pkcs1.getEncoded()).isEqualTo(pkcs8.getEncoded());
  }

  @Test
  void anEncryptedPkcs1KeyIsRefusedAsEncrypted() throws Exception {
    openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "pk8.pem");
    openssl(
        "rsa",
        "-in",
        "pk8.pem",
        "-traditional",
        "-aes128",
        "-passout",
        "pass:secret",
        "-out",
        "enc.pem");

    assertThatThrownBy(() -> PemFiles.privateKey(dir.resolve("enc.pem")))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("encrypted");
  }

  @Test
  void aFileWithoutAKeyNamesBothFormats() throws Exception {
    Path file = dir.resolve("none.pem");
    Files.writeString(file, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");

    assertThatThrownBy(() -> PemFiles.privateKey(file))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("BEGIN PRIVATE KEY")
        .hasMessageContaining("BEGIN RSA PRIVATE KEY");
  }

  private void openssl(String... args) throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(
                java.util.stream.Stream.concat(List.of("openssl").stream(), List.of(args).stream())
                    .toList())
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as("openssl %s: %s", List.of(args), output).isZero();
  }
}
