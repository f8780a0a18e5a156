{{/*
The variables the chart sets on each service, beyond bas.commonEnv: addresses, URLs and keys, which depend on the
deployment. Everything else a service reads has a default in its config.ts, or comes from <service>.env.
test/deploy/helm-chart.test.ts checks each name against the service's config schema.
*/}}

{{- define "bas.env.gateway" -}}
- name: PORT
  value: "8080"
- name: HOST
  value: "0.0.0.0"
- name: PUBLIC_URL
  value: {{ include "bas.publicUrl" . | quote }}
- name: SESSIONS_ADDR
  value: {{ include "bas.grpcAddr" (dict "root" . "component" "sessions") | quote }}
- name: BROWSER_POOL_ADDR
  value: {{ include "bas.grpcAddr" (dict "root" . "component" "browser-pool") | quote }}
- name: BROWSER_POOL_REPLICAS
  value: {{ int .Values.browserPool.replicas | quote }}
- name: RUNNER_ADDR
  value: {{ include "bas.grpcAddr" (dict "root" . "component" "runner") | quote }}
- name: BILLING_ADDR
  value: {{ include "bas.grpcAddr" (dict "root" . "component" "billing") | quote }}
{{ include "bas.secretEnv" (dict "root" . "name" "BOOTSTRAP_API_KEY") }}
{{ include "bas.secretEnv" (dict "root" . "name" "BLOB_SIGNING_KEY") }}
{{- include "bas.modelCatalogEnv" . }}
{{- end }}

{{- define "bas.env.sessions" -}}
# Base of the session live view links (<PUBLIC_URL>/live/sessions/...), served by the gateway.
- name: PUBLIC_URL
  value: {{ include "bas.publicUrl" . | quote }}
# The temporary mailboxes' SMTP receiver (docs/mailbox.md): addresses <random>@MAIL_DOMAIN, mail in on port smtp.
- name: SMTP_HOST
  value: "0.0.0.0"
- name: SMTP_PORT
  value: "2525"
- name: MAIL_DOMAIN
  value: {{ .Values.mailbox.domain | default (include "bas.host" .) | quote }}
- name: SMTP_MAX_MESSAGE_BYTES
  value: {{ int .Values.mailbox.maxMessageBytes | quote }}
{{- if .Values.mailbox.tls.secretName }}
# STARTTLS with the mounted Secret (the volume smtp-tls of deployments.yaml; renewals arrive in place).
- name: SMTP_TLS_CERT_FILE
  value: /etc/bas/smtp-tls/tls.crt
- name: SMTP_TLS_KEY_FILE
  value: /etc/bas/smtp-tls/tls.key
{{- end }}
{{ include "bas.secretEnv" (dict "root" . "name" "SECRETS_KEY") }}
{{- end }}

{{- define "bas.env.runner" -}}
- name: SESSIONS_ADDR
  value: {{ include "bas.grpcAddr" (dict "root" . "component" "sessions") | quote }}
- name: BROWSER_POOL_ADDR
  value: {{ include "bas.grpcAddr" (dict "root" . "component" "browser-pool") | quote }}
- name: BROWSER_POOL_REPLICAS
  value: {{ int .Values.browserPool.replicas | quote }}
- name: BILLING_ADDR
  value: {{ include "bas.grpcAddr" (dict "root" . "component" "billing") | quote }}
{{- with .Values.llm.baseUrl }}
- name: LLM_BASE_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.llm.model }}
- name: LLM_MODEL
  value: {{ . | quote }}
{{- end }}
{{ include "bas.secretEnv" (dict "root" . "name" "LLM_API_KEY" "optional" true) }}
{{ include "bas.secretEnv" (dict "root" . "name" "MODEL_ROUTES" "optional" true) }}
{{ include "bas.secretEnv" (dict "root" . "name" "PROVIDER_KEY_SECRET") }}
{{- include "bas.modelCatalogEnv" . }}
{{- end }}

{{- define "bas.env.billing" -}}
{{- if .Values.billing.priceTable }}
- name: PRICE_TABLE
  valueFrom:
    configMapKeyRef:
      name: {{ include "bas.fullname" . }}-config
      key: price-table.json
{{- end }}
{{- if .Values.billing.projectCredits }}
- name: PROJECT_CREDITS
  valueFrom:
    configMapKeyRef:
      name: {{ include "bas.fullname" . }}-config
      key: project-credits.json
{{- end }}
{{- include "bas.modelCatalogEnv" . }}
{{- end }}

{{/*
browser-pool on the Kubernetes driver (docs/browser-pool.md). NODE_ID is the pod's name, stable in a StatefulSet;
the URLs below expand $(NODE_ID) (Kubernetes substitutes variables defined earlier in the list).
*/}}
{{- define "bas.env.browser-pool" -}}
{{- $fullname := include "bas.fullname" . -}}
{{- $pool := .Values.browserPool -}}
- name: NODE_ID
  valueFrom:
    fieldRef: { fieldPath: metadata.name }
- name: BROWSER_DRIVER
  value: kubernetes
- name: CDP_HOST
  value: "0.0.0.0"
- name: CDP_PORT
  value: "9223"
# cdpUrl and liveUrl of this replica's browsers: the browsers Ingress routes /pool/<pod>/ to this pod only.
- name: CDP_PUBLIC_URL
  value: {{ printf "%s://%s%s" (ternary "wss" "ws" .Values.ingress.tls.enabled) (include "bas.host" .) (include "bas.poolPath" (dict "pod" "$(NODE_ID)")) | quote }}
# The runner reaches the replica directly, by its pod's DNS name under the headless Service.
- name: CDP_INTERNAL_URL
  value: {{ printf "ws://$(NODE_ID).%s-browser-pool-headless.%s.svc:9223" $fullname .Release.Namespace | quote }}
- name: K8S_NAMESPACE
  valueFrom:
    fieldRef: { fieldPath: metadata.namespace }
# Browser pods reach their egress proxies on this pod's IP.
- name: PROXY_HOST
  value: "0.0.0.0"
- name: K8S_PROXY_ADVERTISE_HOST
  valueFrom:
    fieldRef: { fieldPath: status.podIP }
# Browser pods name this pod as their owner: Kubernetes deletes them with it.
- name: K8S_OWNER_POD_NAME
  valueFrom:
    fieldRef: { fieldPath: metadata.name }
- name: K8S_OWNER_POD_UID
  valueFrom:
    fieldRef: { fieldPath: metadata.uid }
# The peers of the browser pods' NetworkPolicy that the driver applies: this StatefulSet's pods.
- name: K8S_POOL_POD_LABELS
  value: {{ include "bas.componentSelector" (dict "root" . "component" "browser-pool") | fromYaml | include "bas.labelList" | quote }}
- name: K8S_BROWSER_IMAGE
  value: {{ $pool.browserPod.image | default (include "bas.image" (dict "root" . "target" "chromium")) | quote }}
- name: K8S_POD_CPU
  value: {{ $pool.browserPod.cpu | quote }}
- name: K8S_POD_MEMORY
  value: {{ $pool.browserPod.memory | quote }}
{{- with $pool.browserPod.nodeSelector }}
- name: K8S_BROWSER_NODE_SELECTOR
  value: {{ include "bas.labelList" . | quote }}
{{- end }}
{{- with $pool.browserPod.tolerations }}
- name: K8S_BROWSER_TOLERATIONS
  value: {{ toJson . | quote }}
{{- end }}
{{- with $pool.browserPod.runtimeClassName }}
- name: K8S_BROWSER_RUNTIME_CLASS
  value: {{ . | quote }}
{{- end }}
- name: K8S_EGRESS_PORT_BASE
  value: {{ int $pool.egressPortBase | quote }}
- name: MAX_BROWSERS_PER_NODE
  value: {{ int $pool.maxBrowsersPerNode | quote }}
- name: WARM_POOL_SIZE
  value: {{ int $pool.warmPoolSize | quote }}
{{- end }}

{{/* {a: b, c: d} → "a=b,c=d", keys sorted. */}}
{{- define "bas.labelList" -}}
{{- $pairs := list -}}
{{- range $k, $v := . }}{{ $pairs = append $pairs (printf "%s=%s" $k $v) }}{{ end -}}
{{ join "," $pairs }}
{{- end }}
