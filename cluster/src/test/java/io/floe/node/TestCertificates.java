package io.floe.node;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate authority and certificates it signs, made with the openssl command line for a test:
 * keys are unencrypted PKCS#8 PEM, server certificates name 127.0.0.1 and localhost.
 */
final class TestCertificates {
  private final Path dir;
  private final String name;

  /** The files of one certificate: its PEM chain and key. */
  record Pair(Path cert, Path key) {}

  private TestCertificates(Path dir, String name) {
    this.dir = dir;
    this.name = name;
  }

  /** A new CA called {@code name} in {@code dir}. */
  static TestCertificates authority(Path dir, String name) throws IOException {
    TestCertificates ca = new TestCertificates(dir, name);
    openssl(
        dir,
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=" + name,
        "-keyout",
        name + ".key",
        "-out",
        name + ".crt");
    return ca;
  }

  Path cert() {
    return dir.resolve(name + ".crt");
  }

  /** A certificate for {@code cn} signed by this CA; {@code server}: usable by a TLS server. */
  Pair issue(String cn, boolean server) throws IOException {
    Path ext = dir.resolve(cn + ".ext");
    Files.writeString(
        ext,
        server
            ? "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n"
            : "extendedKeyUsage=clientAuth\n",
        StandardCharsets.US_ASCII);
    openssl(
        dir,
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-subj",
        "/CN=" + cn,
        "-keyout",
        cn + ".key",
        "-out",
        cn + ".csr");
    openssl(
        dir,
        "x509",
        "-req",
        "-in",
        cn + ".csr",
        "-CA",
        name + ".crt",
        "-CAkey",
        name + ".key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        cn + ".ext",
        "-out",
        cn + ".crt");
    return new Pair(dir.resolve(cn + ".crt"), dir.resolve(cn + ".key"));
  }

  private static void openssl(Path dir, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    try {
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        throw new IOException("openssl " + String.join(" ", args) + " failed:\n" + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while openssl ran", e);
    }
  }
}
