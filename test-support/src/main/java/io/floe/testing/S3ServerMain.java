package io.floe.testing;

import java.io.InputStream;

/**
 * An {@link S3TestServer} in a process of its own, for benchmarks that must not count the server's
 * CPU as the client's: prints {@code endpoint bucket access-key secret-key} on one line, serves
 * until its standard input closes, then stops and deletes its objects. Run on {@code
 * test-support/target/classes} and {@code test-support/target/runtime-classpath.txt} (written by
 * {@code mvn package}). Arguments {@code [GET_LATENCY_MS [GET_KB_PER_SECOND]]} slow its object
 * reads down as {@link S3TestServer#start(long, long)} does.
 */
public final class S3ServerMain {
  private S3ServerMain() {}

  public static void main(String[] args) throws Exception {
    long latency = args.length > 0 ? Long.parseLong(args[0]) : 0;
    long speed = args.length > 1 ? Long.parseLong(args[1]) : 0;
    try (S3TestServer s3 = S3TestServer.start(latency, speed)) {
      System.out.println(
          s3.endpoint() + " " + s3.bucket() + " " + s3.accessKey() + " " + s3.secretKey());
      System.out.flush();
      InputStream in = System.in;
      while (in.read() >= 0) {
        // the parent holds the pipe open while it benchmarks
      }
    }
    System.exit(0);
  }
}
