{{/* Names, labels, images and the pieces every pod of the chart shares. */}}

{{- define "bas.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
<release>-bas, or just <release> when it already says bas. At most 38 characters: "<fullname>-browser-pool" must
stay within the 52 a StatefulSet's name may have (its pods get a 63-character controller-revision-hash label).
*/}}
{{- define "bas.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 38 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 38 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "bas.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "bas.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: bas
{{- end }}

{{- define "bas.selectorLabels" -}}
app.kubernetes.io/name: {{ include "bas.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* (dict "root" $ "component" "gateway") */}}
{{- define "bas.componentLabels" -}}
{{ include "bas.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "bas.componentSelector" -}}
{{ include "bas.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
The five services: where their values live and their fixed ports (each service's config default, so a pod started
by hand with no variables listens where the chart expects). The metrics ports are METRICS_PORT's defaults; sessions'
smtpPort is SMTP_PORT's (the temporary mailboxes' SMTP receiver, docs/mailbox.md).
*/}}
{{- define "bas.components" -}}
gateway: { values: gateway, grpcPort: 50050, metricsPort: 9460, httpPort: 8080 }
sessions: { values: sessions, grpcPort: 50051, metricsPort: 9461, smtpPort: 2525 }
browser-pool: { values: browserPool, grpcPort: 50052, metricsPort: 9462, cdpPort: 9223 }
runner: { values: runner, grpcPort: 50053, metricsPort: 9463 }
billing: { values: billing, grpcPort: 50054, metricsPort: 9464 }
{{- end }}

{{/*
(dict "root" $ "component" "sessions") → dns:///<its headless gRPC Service>:port, for the *_ADDR variables: the name
resolves to every ready pod, and the clients spread their calls over them (round robin).
*/}}
{{- define "bas.grpcAddr" -}}
{{- $c := get (include "bas.components" .root | fromYaml) .component -}}
dns:///{{ include "bas.fullname" .root }}-{{ .component }}-grpc:{{ int $c.grpcPort }}
{{- end }}

{{/* (dict "root" $ "target" "gateway") → <registry>/bas/<target>:<tag>; targets are the Dockerfile's. */}}
{{- define "bas.image" -}}
{{- $registry := .root.Values.image.registry | trimSuffix "/" -}}
{{- $tag := .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{ if $registry }}{{ $registry }}/{{ end }}bas/{{ .target }}:{{ $tag }}
{{- end }}

{{/* The public host, required: every URL handed out (REST, cdpUrl, liveUrl, presigned blobs) is built on it. */}}
{{- define "bas.host" -}}
{{- required "ingress.host is required: the public host name of the service, e.g. --set ingress.host=agents.example.com" .Values.ingress.host }}
{{- end }}

{{- define "bas.publicUrl" -}}
{{ ternary "https" "http" .Values.ingress.tls.enabled }}://{{ include "bas.host" . }}
{{- end }}

{{/* The path of one browser-pool replica's CDP port on the ingress host (see browserPool in values.yaml). */}}
{{- define "bas.poolPath" -}}
/pool/{{ .pod }}
{{- end }}

{{- define "bas.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "bas.fullname" .) }}
{{- end }}

{{- define "bas.postgresSecretName" -}}
{{- .Values.postgres.existingSecret.name | default (printf "%s-postgres" (include "bas.fullname" .)) }}
{{- end }}

{{- define "bas.postgresSecretKey" -}}
{{- if .Values.postgres.existingSecret.name }}{{ .Values.postgres.existingSecret.key }}{{ else }}DATABASE_URL{{ end }}
{{- end }}

{{/* JetStream replicas of our streams and buckets (NATS_REPLICAS): as many as the chart's NATS has, up to 3. */}}
{{- define "bas.natsReplicas" -}}
{{- if .Values.nats.streamReplicas }}{{ int .Values.nats.streamReplicas }}
{{- else if .Values.nats.url }}1
{{- else }}{{ min (int .Values.nats.replicas) 3 }}
{{- end }}
{{- end }}

{{- define "bas.natsUrl" -}}
{{- .Values.nats.url | default (printf "nats://%s-nats:4222" (include "bas.fullname" .)) }}
{{- end }}

{{/* Changes whenever configuration the pods read at start changes, so that they roll. */}}
{{- define "bas.configChecksum" -}}
{{- $v := .Values -}}
{{- list $v.secrets $v.llm $v.modelCatalog $v.billing.priceTable $v.billing.projectCredits $v.postgres.url $v.postgres.existingSecret $v.nats.url | toJson | sha256sum }}
{{- end }}

{{/* The variables every service reads (packages/service-kit/src/config.ts) plus its ports and traces. */}}
{{- define "bas.commonEnv" -}}
{{- $c := get (include "bas.components" .root | fromYaml) .component -}}
- name: NATS_URL
  value: {{ include "bas.natsUrl" .root | quote }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "bas.postgresSecretName" .root }}
      key: {{ include "bas.postgresSecretKey" .root }}
- name: NAMESPACE
  value: {{ .root.Values.streamNamespace | quote }}
- name: NATS_REPLICAS
  value: {{ include "bas.natsReplicas" .root | quote }}
- name: LOG_LEVEL
  value: {{ .root.Values.logLevel | quote }}
# The gRPC servers (and the metrics server) listen on loopback unless told otherwise.
- name: GRPC_HOST
  value: "0.0.0.0"
- name: GRPC_PORT
  value: {{ int $c.grpcPort | quote }}
- name: METRICS_PORT
  value: {{ int $c.metricsPort | quote }}
{{- with .root.Values.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end }}

{{/* A service's extra variables from values (<service>.env), by name. */}}
{{- define "bas.extraEnv" -}}
{{- $env := list -}}
{{- range $name, $value := . }}{{ $env = append $env (dict "name" $name "value" (toString $value)) }}{{ end -}}
{{ toYaml $env }}
{{- end }}

{{/* A key of the chart's Secret (or existingSecret); optional ones may be absent from it. */}}
{{- define "bas.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "bas.secretName" .root }}
      key: {{ .name }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end }}

{{/* The model catalog file, where gateway, runner and billing read MODEL_CATALOG. */}}
{{- define "bas.modelCatalogEnv" -}}
{{- if .Values.modelCatalog }}
- name: MODEL_CATALOG
  value: /etc/bas/model-catalog.json
{{- end }}
{{- end }}

{{- define "bas.podSecurityContext" -}}
{{ toYaml .Values.podSecurityContext }}
{{- end }}

{{- define "bas.containerSecurityContext" -}}
{{ toYaml .Values.containerSecurityContext }}
{{- end }}

{{/*
Probes of a service container: grpc.health.v1 on its gRPC port by default; <service>.startupProbe / readinessProbe
/ livenessProbe replace them. Start-up allows five minutes: migrations and the first catch-up of the read models run
before the service turns SERVING.
*/}}
{{- define "bas.probes" -}}
{{- $grpc := dict "grpc" (dict "port" (int .grpcPort)) -}}
startupProbe:
  {{- toYaml (.values.startupProbe | default (merge (dict "periodSeconds" 5 "failureThreshold" 60) $grpc)) | nindent 2 }}
readinessProbe:
  {{- toYaml (.values.readinessProbe | default (merge (dict "periodSeconds" 5 "failureThreshold" 2) $grpc)) | nindent 2 }}
livenessProbe:
  {{- toYaml (.values.livenessProbe | default (merge (dict "periodSeconds" 10 "failureThreshold" 6) $grpc)) | nindent 2 }}
{{- end }}

{{/* Scheduling and pull secrets of a pod: (dict "root" $ "values" <component values> "component" "gateway") */}}
{{- define "bas.podScheduling" -}}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
# Replicas spread over nodes where the cluster allows it.
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "bas.componentSelector" . | nindent 8 }}
{{- end }}

{{/* NetworkPolicy peers: the pods of the given components of this release. */}}
{{- define "bas.peers" -}}
{{- $peers := list -}}
{{- range .components -}}
{{- $labels := include "bas.componentSelector" (dict "root" $.root "component" .) | fromYaml -}}
{{- $peers = append $peers (dict "podSelector" (dict "matchLabels" $labels)) -}}
{{- end -}}
{{ toYaml $peers }}
{{- end }}

{{/* The start of a NetworkPolicy admitting connections to one component's pods. */}}
{{- define "bas.policyHead" -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "bas.fullname" .root }}-{{ .component }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "bas.componentLabels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "bas.componentSelector" . | nindent 6 }}
  policyTypes: [Ingress]
{{- end }}
