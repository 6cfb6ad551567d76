{{/*
The names are fixed, as in deploy/webhook: they are the webhook's --service, --tls-secret and --webhook-config,
and the RBAC rules grant by them. The cluster-scoped ones (MutatingWebhookConfiguration, ClusterRole and its
binding) make this one release per cluster; a second one is refused by Helm as owning objects of another.
*/}}

{{/* The image reference: repository@digest when a digest is given, else repository:tag (tag: appVersion). */}}
{{- define "osm-healthcheck.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/*
metadata for an object: name, the release namespace when namespaced, labels (the object's own, which win, plus
commonLabels) and annotations (commonAnnotations plus the object's own, which win). Called with a dict:
  root (the top context), name, namespaced (bool), labels (dict), annotations (dict).
No key is written empty, so the defaults render exactly what deploy/webhook does.
*/}}
{{- define "osm-healthcheck.metadata" -}}
metadata:
  name: {{ .name }}
  {{- if .namespaced }}
  namespace: {{ .root.Release.Namespace }}
  {{- end }}
  {{- $labels := merge (dict) (.labels | default dict) .root.Values.commonLabels }}
  {{- with $labels }}
  labels:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- $annotations := merge (dict) (.annotations | default dict) .root.Values.commonAnnotations }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* The labels every object of deploy/webhook carries. */}}
{{- define "osm-healthcheck.partOf" -}}
app.kubernetes.io/part-of: osm-healthcheck
{{- end -}}
