# A Floe data node. Stage the jars first (k8s/image-context), then: docker build -t <image> .
# Single stage on purpose: the jars are built by the same Maven build CI runs, not inside Docker.
FROM eclipse-temurin:17-jre

RUN groupadd --system --gid 10001 floe \
 && useradd --system --uid 10001 --gid floe --no-create-home --shell /usr/sbin/nologin floe

COPY target/image/lib/ /opt/floe/lib/

USER 10001:10001
# flight, remoting, management
EXPOSE 47470 25520 8558
# --add-opens here too so the image also runs without the StatefulSet's JAVA_TOOL_OPTIONS
# (Arrow needs it on Java 17); heap and direct-memory sizes come from JAVA_TOOL_OPTIONS.
ENTRYPOINT ["java", "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "-cp", "/opt/floe/lib/*", "io.floe.node.Main"]
