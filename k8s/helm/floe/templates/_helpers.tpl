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

{{/* .Values.memory in MiB: "9Gi" or "9216Mi". */}}
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

{{/* JVM heap: 2/9 of the container, rounded down to 256Mi, at least 512Mi. */}}
{{- define "floe.heapMi" -}}
{{- $heap := mul (div (div (mul (include "floe.memoryMi" . | atoi) 2) 9) 256) 256 -}}
{{- max $heap 512 -}}
{{- end -}}

{{/* Arrow memory (FLOE_MEMORY_LIMIT): what the heap and 1Gi of JVM overhead leave. */}}
{{- define "floe.arrowMi" -}}
{{- $arrow := sub (sub (include "floe.memoryMi" . | atoi) (include "floe.heapMi" . | atoi)) 1024 -}}
{{- if lt $arrow 512 -}}
{{- fail (printf "memory %s leaves %dMi for Arrow data after the heap and JVM overhead; give at least 2Gi" (toString .Values.memory) $arrow) -}}
{{- end -}}
{{- $arrow -}}
{{- end -}}
