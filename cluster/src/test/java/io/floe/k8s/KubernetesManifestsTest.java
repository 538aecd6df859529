package io.floe.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes manifests agree with the node they deploy: {@code kustomize build
 * k8s/overlays/example} yields pods that discovery can find (label = bootstrap service name, RBAC
 * for reading pods), probes and ports that match application.conf, memory limits that hold the
 * Arrow limit plus the heap, and a grace period long enough for shard hand-off. The Kubeflow
 * runtime and TrainJob in k8s/kubeflow (not kustomized: they need Kubeflow's CRDs) are parsed and
 * cross-checked against the rendered Flight service.
 *
 * <p>Needs the kustomize binary on PATH or in ~/go/bin ({@code .ci/install-kustomize}).
 */
class KubernetesManifestsTest {
  private static final String OVERLAY = "k8s/overlays/example";
  private static final String NAMESPACE = "floe-example";
  private static final String CONFIG_MAP = "floe-config";
  private static final Set<String> CLUSTER_SCOPED =
      Set.of(
          "Namespace",
          "ClusterRole",
          "ClusterRoleBinding",
          "CustomResourceDefinition",
          "PersistentVolume",
          "StorageClass",
          "PriorityClass");

  private static final YAMLMapper YAML = new YAMLMapper();

  private static Path repoRoot;
  private static List<JsonNode> rendered;
  private static Config appConf;

  @BeforeAll
  static void render() throws Exception {
    repoRoot = findRepoRoot();
    appConf =
        ConfigFactory.parseFile(
                repoRoot.resolve("cluster/src/main/resources/application.conf").toFile())
            .resolve(ConfigResolveOptions.noSystem().setAllowUnresolved(true));
    rendered = parseAll(kustomizeBuild(repoRoot.resolve(OVERLAY)));
  }

  @Test
  void podLabelIsTheBootstrapServiceName() {
    JsonNode sts = statefulSet();
    String app = podLabels().get("app");
    assertThat(app).as("pod template label app").isNotBlank();
    assertThat(envValue("FLOE_SERVICE_NAME"))
        .as("FLOE_SERVICE_NAME must equal the pod label app: discovery selects app=<service name>")
        .isEqualTo(app);
    assertThat(text(sts, "spec", "serviceName"))
        .as("the StatefulSet's governing service is the headless bootstrap service")
        .isEqualTo(app);
    assertThat(one("Service", app).path("spec").path("clusterIP").asText())
        .as("service %s is headless", app)
        .isEqualTo("None");
    assertThat(envValue("FLOE_DISCOVERY")).isEqualTo("kubernetes");
  }

  @Test
  void nodeAddressesComeFromTheDownwardApi() {
    for (String name : List.of("FLOE_REMOTE_HOST", "FLOE_MANAGEMENT_HOST")) {
      assertThat(fieldRef(name)).as("%s from the downward API", name).isEqualTo("status.podIP");
    }
    assertThat(fieldRef("FLOE_NAMESPACE")).isEqualTo("metadata.namespace");
    assertThat(envValue("FLOE_FLIGHT_BIND_HOST")).isEqualTo("0.0.0.0");
    // Readers get the pod's DNS name under the headless Service, which a certificate can name.
    assertThat(fieldRef("POD_NAME")).isEqualTo("metadata.name");
    assertThat(fieldRef("POD_NAMESPACE")).isEqualTo("metadata.namespace");
    assertThat(envValue("FLOE_FLIGHT_ADVERTISED_HOST"))
        .isEqualTo(
            "$(POD_NAME)." + text(statefulSet(), "spec", "serviceName") + ".$(POD_NAMESPACE).svc");
  }

  @Test
  void prometheusScrapesTheManagementPort() {
    JsonNode annotations =
        statefulSet().path("spec").path("template").path("metadata").path("annotations");
    assertThat(annotations.path("prometheus.io/scrape").asText()).isEqualTo("true");
    assertThat(annotations.path("prometheus.io/path").asText()).isEqualTo("/metrics");
    assertThat(annotations.path("prometheus.io/port").asText())
        .isEqualTo(containerPorts().get("management").toString());
  }

  @Test
  void tlsAndTheStateVolumeAreMounted() {
    JsonNode sts = statefulSet();
    Map<String, String> mounts = new java.util.HashMap<>();
    container()
        .path("volumeMounts")
        .forEach(m -> mounts.put(m.path("name").asText(), m.path("mountPath").asText()));
    assertThat(envValue("FLOE_TLS_CERT_FILE")).isEqualTo(mounts.get("tls") + "/tls.crt");
    assertThat(envValue("FLOE_TLS_KEY_FILE")).isEqualTo(mounts.get("tls") + "/tls.key");
    assertThat(envValue("FLOE_REMOTE_TRANSPORT")).isEqualTo("tls-tcp");
    assertThat(envValue("FLOE_REMOTE_TLS_DIR")).isEqualTo(mounts.get("tls"));
    assertThat(envValue("FLOE_STATE_DIR")).startsWith(mounts.get("state") + "/");
    JsonNode claim = sts.path("spec").path("volumeClaimTemplates").get(0);
    assertThat(text(claim, "metadata", "name")).isEqualTo("state");
    List<String> secrets = new java.util.ArrayList<>();
    sts.path("spec")
        .path("template")
        .path("spec")
        .path("volumes")
        .forEach(v -> secrets.add(v.path("secret").path("secretName").asText()));
    assertThat(secrets).contains("floe-tls", "floe-auth");
  }

  @Test
  void probesUseTheManagementPortAndHealthPaths() {
    JsonNode container = container();
    Set<String> portNames = containerPorts().keySet();
    for (String probe : List.of("livenessProbe", "readinessProbe", "startupProbe")) {
      JsonNode get = container.path(probe).path("httpGet");
      if (get.isMissingNode()) {
        assertThat(probe).as("only the startup probe is optional").isEqualTo("startupProbe");
        continue;
      }
      assertThat(get.path("port").asText())
          .as("%s port (by name) is a container port: %s", probe, portNames)
          .isIn(portNames)
          .isEqualTo("management");
    }
    assertThat(text(container, "livenessProbe", "httpGet", "path")).isEqualTo("/alive");
    assertThat(text(container, "readinessProbe", "httpGet", "path")).isEqualTo("/ready");
  }

  @Test
  void portsMatchApplicationConf() {
    int managementPort = appConf.getInt("pekko.management.http.port");
    Map<String, Integer> expected =
        Map.of(
            "flight", appConf.getInt("floe.flight.port"),
            "remoting", appConf.getInt("pekko.remote.artery.canonical.port"),
            "management", managementPort);

    assertThat(containerPorts()).as("container ports by name").isEqualTo(expected);
    assertThat(servicePorts("floe"))
        .as("headless service: management and remoting")
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("management", managementPort, "remoting", expected.get("remoting")));
    assertThat(servicePorts("floe-flight")).isEqualTo(Map.of("flight", expected.get("flight")));
    for (String service : List.of("floe", "floe-flight")) {
      for (JsonNode port : one("Service", service).path("spec").path("ports")) {
        assertThat(port.path("targetPort").asText())
            .as("service %s targets a named container port", service)
            .isIn(expected.keySet());
      }
    }
  }

  @Test
  void roleGrantsOnlyPodReadsToTheNodesServiceAccount() {
    List<JsonNode> roles = ofKind("Role");
    assertThat(roles).hasSize(1);
    assertThat(ofKind("ClusterRole")).isEmpty();
    JsonNode role = roles.get(0);
    JsonNode rules = role.path("rules");
    assertThat(rules).hasSize(1);
    JsonNode rule = rules.get(0);
    assertThat(strings(rule.path("apiGroups"))).containsExactly("");
    assertThat(strings(rule.path("resources"))).containsExactly("pods");
    assertThat(strings(rule.path("verbs"))).containsExactlyInAnyOrder("get", "watch", "list");
    assertThat(rule.path("resourceNames").isMissingNode()).isTrue();

    String serviceAccount = text(statefulSet(), "spec", "template", "spec", "serviceAccountName");
    assertThat(serviceAccount).isNotBlank();
    one("ServiceAccount", serviceAccount);
    List<JsonNode> bindings = ofKind("RoleBinding");
    assertThat(bindings).hasSize(1);
    JsonNode binding = bindings.get(0);
    assertThat(text(binding, "roleRef", "kind")).isEqualTo("Role");
    assertThat(text(binding, "roleRef", "name")).isEqualTo(text(role, "metadata", "name"));
    assertThat(binding.path("subjects"))
        .anySatisfy(
            subject -> {
              assertThat(subject.path("kind").asText()).isEqualTo("ServiceAccount");
              assertThat(subject.path("name").asText()).isEqualTo(serviceAccount);
              assertThat(subject.path("namespace").asText()).isEqualTo(NAMESPACE);
            });
  }

  @Test
  void selectorsMatchThePods() {
    assertSelectsPods("StatefulSet selector", statefulSet().path("spec").path("selector"));

    List<JsonNode> budgets = ofKind("PodDisruptionBudget");
    assertThat(budgets).hasSize(1);
    JsonNode pdb = budgets.get(0).path("spec");
    assertThat(pdb.path("maxUnavailable").asInt()).isEqualTo(1);
    assertSelectsPods("PodDisruptionBudget selector", pdb.path("selector"));

    JsonNode headless = one("Service", "floe").path("spec");
    assertThat(headless.path("publishNotReadyAddresses").asBoolean())
        .as("bootstrap must reach pods before they are ready")
        .isTrue();
    assertSelectsPods("headless service selector", headless.path("selector"));
    assertSelectsPods(
        "Flight service selector", one("Service", "floe-flight").path("spec").path("selector"));
  }

  private static void assertSelectsPods(String what, JsonNode selector) {
    assertThat(selector.path("matchExpressions").isMissingNode())
        .as("%s uses labels only", what)
        .isTrue();
    Map<String, String> labels = stringMap(selector);
    assertThat(labels).as(what).isNotEmpty();
    assertThat(podLabels()).as("pod labels selected by %s", what).containsAllEntriesOf(labels);
  }

  @Test
  void memoryLimitHoldsArrowPlusHeap() {
    JsonNode container = container();
    List<String> envFrom =
        stream(container.path("envFrom"))
            .map(e -> e.path("configMapRef").path("name").asText())
            .collect(Collectors.toList());
    assertThat(envFrom).contains(CONFIG_MAP);
    JsonNode memoryRef = env("FLOE_MEMORY_LIMIT").path("valueFrom").path("configMapKeyRef");
    assertThat(memoryRef.path("name").asText()).isEqualTo(CONFIG_MAP);
    assertThat(memoryRef.path("key").asText()).isEqualTo("FLOE_MEMORY_LIMIT");

    String arrowSetting = configMapValue("FLOE_MEMORY_LIMIT");
    // Parsed the way the node parses floe.memory.limit.
    long arrow =
        ConfigFactory.parseMap(Map.of("limit", arrowSetting)).getMemorySize("limit").toBytes();
    String javaOptions = envValue("JAVA_TOOL_OPTIONS");
    assertThat(javaOptions).contains("--add-opens=java.base/java.nio=ALL-UNNAMED");
    long heap =
        jvmSize(javaOptions, "-Xmx")
            .orElseThrow(() -> new AssertionError("no -Xmx in JAVA_TOOL_OPTIONS: " + javaOptions));
    long direct =
        jvmSize(javaOptions, "-XX:MaxDirectMemorySize=")
            .orElseThrow(
                () ->
                    new AssertionError(
                        "no -XX:MaxDirectMemorySize in JAVA_TOOL_OPTIONS: " + javaOptions));
    String limitText = text(container, "resources", "limits", "memory");
    long limit = quantityBytes(limitText);

    assertThat(direct)
        .as("MaxDirectMemorySize (%s) >= Arrow limit %s", javaOptions, arrowSetting)
        .isGreaterThanOrEqualTo(arrow);
    assertThat(limit)
        .as(
            "container memory limit %s >= Arrow limit %s + heap (%s)",
            limitText, arrowSetting, javaOptions)
        .isGreaterThanOrEqualTo(arrow + heap);
    assertThat(limit)
        .as("container memory limit %s >= direct memory + heap (%s)", limitText, javaOptions)
        .isGreaterThanOrEqualTo(direct + heap);
    assertThat(quantityBytes(text(container, "resources", "requests", "memory")))
        .as("memory request equals the limit")
        .isEqualTo(limit);
  }

  @Test
  void gracePeriodCoversShardHandOff() {
    JsonNode pod = statefulSet().path("spec").path("template").path("spec");
    assertThat(pod.path("terminationGracePeriodSeconds").asInt()).isGreaterThanOrEqualTo(60);
    assertThat(text(statefulSet(), "spec", "podManagementPolicy")).isEqualTo("Parallel");
  }

  @Test
  void everyNamespacedObjectHasTheNamespace() {
    one("Namespace", NAMESPACE);
    for (JsonNode doc : rendered) {
      String kind = doc.path("kind").asText();
      if (CLUSTER_SCOPED.contains(kind)) {
        continue;
      }
      assertThat(doc.path("metadata").path("namespace").asText())
          .as("namespace of %s %s", kind, doc.path("metadata").path("name").asText())
          .isEqualTo(NAMESPACE);
    }
  }

  @Test
  void overlaySetsImageReplicasAndSecretReferences() {
    assertThat(text(container(), "image")).isEqualTo("ghcr.io/example/floe:0.1.0");
    assertThat(statefulSet().path("spec").path("replicas").asInt()).isEqualTo(3);
    assertThat(ofKind("Secret")).as("credentials are never rendered from the repository").isEmpty();
    for (String name : List.of("FLOE_S3_ACCESS_KEY", "FLOE_S3_SECRET_KEY")) {
      JsonNode env = env(name);
      assertThat(env.path("value").isMissingNode()).as("%s has no literal value", name).isTrue();
      assertThat(env.path("valueFrom").path("secretKeyRef").path("name").asText())
          .isEqualTo("floe-s3");
    }
    assertThat(configMapValue("FLOE_MIN_DATA_MEMBERS")).isNotBlank();
    assertThat(configMapValue("FLOE_SLICE_TARGET_SIZE")).isNotBlank();
  }

  @Test
  void kubeflowTrainJobUsesTheFloeRuntime() throws IOException {
    List<JsonNode> kubeflow = new ArrayList<>();
    try (Stream<Path> files = Files.list(repoRoot.resolve("k8s/kubeflow"))) {
      for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        kubeflow.addAll(parseAll(Files.readString(file)));
      }
    }
    JsonNode runtime = only(kubeflow, "ClusterTrainingRuntime");
    JsonNode trainJob = only(kubeflow, "TrainJob");
    assertThat(text(runtime, "apiVersion")).isEqualTo("trainer.kubeflow.org/v1alpha1");
    assertThat(text(trainJob, "apiVersion")).isEqualTo("trainer.kubeflow.org/v1alpha1");
    assertThat(text(runtime, "metadata", "name")).isEqualTo("torch-distributed-with-floe");
    assertThat(text(trainJob, "spec", "runtimeRef", "name"))
        .isEqualTo(text(runtime, "metadata", "name"));
    assertThat(text(trainJob, "spec", "runtimeRef", "kind")).isEqualTo("ClusterTrainingRuntime");
    assertThat(trainJob.path("spec").path("trainer").path("numNodes").asInt()).isEqualTo(2);

    JsonNode trainer =
        stream(runtime.path("spec").path("template").path("spec").path("replicatedJobs"))
            .filter(
                job ->
                    "trainer"
                        .equals(
                            job.path("template")
                                .path("metadata")
                                .path("labels")
                                .path("trainer.kubeflow.org/trainjob-ancestor-step")
                                .asText()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no replicatedJob of step trainer in runtime"));
    JsonNode node =
        stream(
                trainer
                    .path("template")
                    .path("spec")
                    .path("template")
                    .path("spec")
                    .path("containers"))
            .filter(c -> "node".equals(c.path("name").asText()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no container named node in the trainer job"));
    String address =
        stream(node.path("env"))
            .filter(e -> "FLOE_ADDRESS".equals(e.path("name").asText()))
            .map(e -> e.path("value").asText())
            .findFirst()
            .orElseThrow(() -> new AssertionError("no FLOE_ADDRESS in the trainer container"));
    assertThat(address)
        .as("FLOE_ADDRESS names the rendered Flight service, over TLS as the nodes serve it")
        .isEqualTo(
            "grpc+tls://floe-flight."
                + NAMESPACE
                + ".svc:"
                + servicePorts("floe-flight").get("flight"));
  }

  // ---- rendering ----

  private static Path findRepoRoot() {
    Path start = Paths.get("").toAbsolutePath();
    for (Path dir = start; dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("k8s/base/kustomization.yaml"))) {
        return dir;
      }
    }
    throw new AssertionError("no k8s/base/kustomization.yaml in " + start + " or above");
  }

  private static Path findKustomize() {
    List<Path> candidates = new ArrayList<>();
    String path = System.getenv().getOrDefault("PATH", "");
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty()) {
        candidates.add(Paths.get(dir, "kustomize"));
      }
    }
    candidates.add(Paths.get(System.getProperty("user.home"), "go", "bin", "kustomize"));
    return candidates.stream()
        .filter(Files::isExecutable)
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "kustomize not found on PATH or in ~/go/bin: run .ci/install-kustomize"));
  }

  private static String kustomizeBuild(Path overlay) throws Exception {
    Path kustomize = findKustomize();
    Process process = new ProcessBuilder(kustomize.toString(), "build", overlay.toString()).start();
    process.getOutputStream().close();
    CompletableFuture<String> stderr =
        CompletableFuture.supplyAsync(() -> readAll(process.getErrorStream()));
    String stdout = readAll(process.getInputStream());
    if (!process.waitFor(2, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      fail("%s build %s did not finish in 2 minutes", kustomize, overlay);
    }
    if (process.exitValue() != 0) {
      fail("%s build %s exited %d:%n%s", kustomize, overlay, process.exitValue(), stderr.join());
    }
    return stdout;
  }

  private static String readAll(InputStream in) {
    try (in) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      in.transferTo(out);
      return out.toString(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<JsonNode> parseAll(String yaml) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (var it = YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml)) {
      while (it.hasNext()) {
        JsonNode doc = it.next();
        if (doc != null && doc.isObject() && doc.size() > 0) {
          docs.add(doc);
        }
      }
    }
    assertThat(docs).as("YAML documents").isNotEmpty();
    return docs;
  }

  // ---- looking things up in the rendered objects ----

  private static List<JsonNode> ofKind(String kind) {
    return rendered.stream()
        .filter(d -> kind.equals(d.path("kind").asText()))
        .collect(Collectors.toList());
  }

  private static JsonNode only(List<JsonNode> docs, String kind) {
    List<JsonNode> matches =
        docs.stream().filter(d -> kind.equals(d.path("kind").asText())).toList();
    assertThat(matches).as("objects of kind %s", kind).hasSize(1);
    return matches.get(0);
  }

  private static JsonNode one(String kind, String name) {
    List<JsonNode> matches =
        ofKind(kind).stream()
            .filter(d -> name.equals(d.path("metadata").path("name").asText()))
            .toList();
    assertThat(matches).as("%s %s", kind, name).hasSize(1);
    return matches.get(0);
  }

  private static JsonNode statefulSet() {
    return one("StatefulSet", "floe");
  }

  private static JsonNode container() {
    JsonNode containers =
        statefulSet().path("spec").path("template").path("spec").path("containers");
    assertThat(containers).as("data node containers").hasSize(1);
    return containers.get(0);
  }

  private static Map<String, String> podLabels() {
    return stringMap(statefulSet().path("spec").path("template").path("metadata").path("labels"));
  }

  private static Map<String, Integer> containerPorts() {
    Map<String, Integer> ports = new HashMap<>();
    for (JsonNode port : container().path("ports")) {
      ports.put(port.path("name").asText(), port.path("containerPort").asInt());
    }
    return ports;
  }

  private static Map<String, Integer> servicePorts(String service) {
    Map<String, Integer> ports = new HashMap<>();
    for (JsonNode port : one("Service", service).path("spec").path("ports")) {
      ports.put(port.path("name").asText(), port.path("port").asInt());
    }
    return ports;
  }

  private static JsonNode env(String name) {
    List<JsonNode> matches =
        stream(container().path("env")).filter(e -> name.equals(e.path("name").asText())).toList();
    assertThat(matches).as("env %s of the data node container", name).hasSize(1);
    return matches.get(0);
  }

  private static String envValue(String name) {
    JsonNode value = env(name).path("value");
    assertThat(value.isTextual()).as("env %s has a literal value", name).isTrue();
    return value.asText();
  }

  private static String fieldRef(String name) {
    return env(name).path("valueFrom").path("fieldRef").path("fieldPath").asText();
  }

  private static String configMapValue(String key) {
    JsonNode value = one("ConfigMap", CONFIG_MAP).path("data").path(key);
    assertThat(value.isTextual()).as("%s in ConfigMap %s", key, CONFIG_MAP).isTrue();
    return value.asText();
  }

  private static String text(JsonNode node, String... path) {
    JsonNode at = node;
    for (String field : path) {
      at = at.path(field);
    }
    return at instanceof MissingNode ? null : at.asText();
  }

  private static Stream<JsonNode> stream(JsonNode array) {
    return StreamSupport.stream(array.spliterator(), false);
  }

  private static List<String> strings(JsonNode array) {
    return stream(array).map(JsonNode::asText).toList();
  }

  private static Map<String, String> stringMap(JsonNode node) {
    JsonNode labels = node.has("matchLabels") ? node.path("matchLabels") : node;
    Map<String, String> map = new HashMap<>();
    labels.properties().forEach(e -> map.put(e.getKey(), e.getValue().asText()));
    return map;
  }

  // ---- sizes ----

  private static final Pattern QUANTITY =
      Pattern.compile("(\\d+(?:\\.\\d+)?)([KMGTPE]i|[kMGTPE])?");

  /** A Kubernetes memory quantity (9Gi, 9664Mi, 9G, 9000000000) in bytes. */
  private static long quantityBytes(String quantity) {
    Matcher m = QUANTITY.matcher(quantity == null ? "" : quantity.trim());
    if (!m.matches()) {
      throw new AssertionError("not a Kubernetes memory quantity: " + quantity);
    }
    String suffix = m.group(2) == null ? "" : m.group(2);
    BigDecimal factor = BigDecimal.ONE;
    if (!suffix.isEmpty()) {
      int exponent = "KMGTPE".indexOf(Character.toUpperCase(suffix.charAt(0))) + 1;
      factor = BigDecimal.valueOf(suffix.endsWith("i") ? 1024 : 1000).pow(exponent);
    }
    return new BigDecimal(m.group(1)).multiply(factor).longValueExact();
  }

  /** The last {@code option<size>} in JVM options (the JVM takes the last), in bytes. */
  private static Optional<Long> jvmSize(String options, String option) {
    Matcher m =
        Pattern.compile("(?:^|\\s)" + Pattern.quote(option) + "(\\d+)([kKmMgGtT]?)(?=\\s|$)")
            .matcher(options);
    Long bytes = null;
    while (m.find()) {
      long n = Long.parseLong(m.group(1));
      int shift =
          switch (m.group(2).toLowerCase()) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
          };
      bytes = n << shift;
    }
    return Optional.ofNullable(bytes);
  }
}
