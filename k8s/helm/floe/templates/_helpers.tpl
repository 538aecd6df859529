{{/* The name of everything the chart creates; also the app label discovery looks pods up by. */}}
{{- define "floe.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "floe.labels" -}}
app: {{ include "floe.fullname" . }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "floe.selectorLabels" -}}
app: {{ include "floe.fullname" . }}
{{- end -}}

{{- define "floe.serviceAccountName" -}}
{{- default (include "floe.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* .Values.memory in MiB: "9Gi" or "9216Mi" (the schema refuses anything else). */}}
{{- define "floe.memoryMi" -}}
{{- $memory := toString .Values.memory -}}
{{- if regexMatch "^[0-9]+Gi$" $memory -}}
{{- mul (trimSuffix "Gi" $memory | atoi) 1024 -}}
{{- else if regexMatch "^[0-9]+Mi$" $memory -}}
{{- trimSuffix "Mi" $memory | atoi -}}
{{- else -}}
{{- fail (printf "memory must be a whole number of Mi or Gi, like 9Gi or 9216Mi: %q" $memory) -}}
{{- end -}}
{{- end -}}

{{/*
The memory rule (docs/kubernetes.md, "Memory sizing"), the one bin/floe-jvm-options applies to
FLOE_MEMORY_LIMIT: heap = Arrow / 8 within [512Mi, 4Gi], direct = Arrow + 256Mi, and the process
needs Arrow + heap + 768Mi. Here it runs backwards from the container's memory: the largest Arrow
limit with Arrow + heap <= memory - 768Mi, rounded down to 256Mi.
*/}}
{{- define "floe.arrowMi" -}}
{{- $room := sub (include "floe.memoryMi" . | atoi) 768 -}}
{{- $arrow := min (sub $room 512) (max (div (mul $room 8) 9) (sub $room 4096)) -}}
{{- if lt $arrow 512 -}}
{{- fail (printf "memory %s leaves %dMi for Arrow data after the heap (at least 512Mi) and 768Mi for the JVM; give at least 1792Mi" (toString .Values.memory) $arrow) -}}
{{- end -}}
{{- mul (div $arrow 256) 256 -}}
{{- end -}}

{{- define "floe.heapMi" -}}
{{- min (max (div (include "floe.arrowMi" . | atoi) 8) 512) 4096 -}}
{{- end -}}

{{- define "floe.directMi" -}}
{{- add (include "floe.arrowMi" . | atoi) 256 -}}
{{- end -}}

{{/* The JVM memory options, word for word what bin/floe-jvm-options prints for the Arrow limit. */}}
{{- define "floe.jvmMemoryOptions" -}}
-Xms{{ include "floe.heapMi" . }}m -Xmx{{ include "floe.heapMi" . }}m -XX:MaxDirectMemorySize={{ include "floe.directMi" . }}m -XX:+UseG1GC -XX:MarkStackSize=256K
{{- end -}}

{{/* Secrets: the one named in values, or the one the chart creates (secrets.yaml). */}}
{{- define "floe.ticketSecretName" -}}
{{- default (printf "%s-ticket" (include "floe.fullname" .)) .Values.ticket.existingSecret -}}
{{- end -}}

{{- define "floe.authSecretName" -}}
{{- default (printf "%s-auth" (include "floe.fullname" .)) .Values.auth.existingSecret -}}
{{- end -}}

{{- define "floe.tlsSecretName" -}}
{{- default (printf "%s-tls" (include "floe.fullname" .)) .Values.tls.existingSecret -}}
{{- end -}}

{{/* The role of callers without a token; empty when they are refused (the node's default). */}}
{{- define "floe.anonymousRole" -}}
{{- $role := .Values.auth.anonymous | default (ternary "none" "operator" .Values.auth.enabled) -}}
{{- if and (not .Values.auth.enabled) (eq $role "none") -}}
{{- fail "auth.enabled=false with auth.anonymous=none lets no caller in, and a node refuses to start so: set auth.anonymous to reader or operator" -}}
{{- end -}}
{{- if ne $role "none" -}}{{ $role }}{{- end -}}
{{- end -}}

{{/* The names readers reach the nodes by: the entry Service and each pod under the headless one. */}}
{{- define "floe.tlsDnsNames" -}}
{{- $name := include "floe.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $names := list -}}
{{- range $host := list (printf "%s-flight" $name) (printf "*.%s" $name) -}}
{{- $names = append $names (printf "%s.%s.svc" $host $ns) -}}
{{- $names = append $names (printf "%s.%s.svc.%s" $host $ns $.Values.clusterDomain) -}}
{{- end -}}
{{- $names = concat (list (printf "%s-flight" $name) (printf "%s-flight.%s" $name $ns)) $names .Values.tls.extraDnsNames -}}
{{- toJson $names -}}
{{- end -}}

{{/* Settings the node takes from a file (--config): catalogs and FileIO properties keep Iceberg's
exact property names there, which FLOE_CATALOG__* variables (lower-cased) cannot all spell. */}}
{{- define "floe.settingsFile" -}}
{{- if or .Values.catalogs .Values.storage.properties -}}
# From the chart's values `catalogs` and `storage.properties` (JSON is HOCON).
floe.catalogs = {{ toJson .Values.catalogs }}
floe.storage.properties = {{ toJson .Values.storage.properties }}
{{- end -}}
{{- end -}}

{{/* FLOE_CATALOG__<NAME>__<PROPERTY> or FLOE_STORAGE__<PROPERTY>, as the node reads them back. */}}
{{- define "floe.secretPropertyVariable" -}}
{{- $property := .property | upper | replace "." "__" | replace "-" "_" -}}
{{- if .catalog -}}
FLOE_CATALOG__{{ .catalog | upper }}__{{ $property }}
{{- else -}}
FLOE_STORAGE__{{ $property }}
{{- end -}}
{{- end -}}
