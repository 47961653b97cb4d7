{{- define "cluster-addons.kubePrometheusStack.volumeSizes" -}}
{{- $values := .Values.monitoring.kubePrometheusStack.release.values -}}
alertmanager: {{ dig "alertmanager" "alertmanagerSpec" "storage" "volumeClaimTemplate" "spec" "resources" "requests" "storage" "" $values | quote }}
prometheus: {{ dig "prometheus" "prometheusSpec" "storageSpec" "volumeClaimTemplate" "spec" "resources" "requests" "storage" "" $values | quote }}
{{- end -}}

{{/* Prometheus keeps at most 85% of its volume (rounded down), leaving room for the WAL. */}}
{{- define "cluster-addons.kubePrometheusStack.defaults" -}}
{{- $sizes := include "cluster-addons.kubePrometheusStack.volumeSizes" . | fromYaml -}}
alertmanager:
  # Don't apply the namespace grouping by default
  config:
    route:
      group_by: ['...']
  alertmanagerSpec:
    # Make sure that alertmanager finds configurations with the alertmanager name as a label
    alertmanagerConfigSelector:
      matchLabels:
        alertmanager: kube-prometheus-stack-alertmanager
    # Do NOT add the namespace matcher to routes from AlertmanagerConfig resources
    alertmanagerConfigMatcherStrategy:
      type: None
prometheus:
  prometheusSpec:
    # Tell Prometheus to pick up all monitors and alerting rules, regardless of labels
    podMonitorSelectorNilUsesHelmValues: false
    serviceMonitorSelectorNilUsesHelmValues: false
    ruleSelectorNilUsesHelmValues: false
{{- with $sizes.prometheus }}
{{- $amount := mustRegexFind "^([0-9]*[.])?[0-9]+" . | float64 }}
{{- $units := mustRegexFind "(K|M|G|T|E|P)i?$" . }}
    # Set the retention size to max 85% of the given volume size, to leave space for the WAL
    # To get a valid storage request, we round down to the nearest whole number
    retentionSize: {{ mulf 0.85 $amount | floor | int64 }}{{ trimSuffix "i" $units }}B
{{- end }}
grafana:
  sidecar:
    # Tell Grafana to include dashboards from all namespaces
    dashboards:
      searchNamespace: ALL
{{ end -}}

{{/*
StatefulSet volume claims cannot be resized by Helm: the provider patches the
PVCs before an upgrade when a size is set, deletes them when none is, and
always after the release is deleted.
*/}}
{{- define "cluster-addons.kubePrometheusStack.hooks" -}}
{{- $sizes := include "cluster-addons.kubePrometheusStack.volumeSizes" . | fromYaml -}}
{{- $selectors := dict
      "alertmanager" (dict "alertmanager" "kube-prometheus-stack-alertmanager")
      "prometheus" (dict "operator.prometheus.io/name" "kube-prometheus-stack-prometheus") -}}
{{- $patch := list -}}
{{- $delete := list -}}
{{- range $component := list "alertmanager" "prometheus" -}}
{{- $pvc := dict "apiVersion" "v1" "kind" "PersistentVolumeClaim" "selector" (index $selectors $component) -}}
{{- with index $sizes $component -}}
{{- $patch = append $patch (merge (dict "action" "patch" "options" (dict "data" (dict "spec" (dict "resources" (dict "requests" (dict "storage" .)))))) $pvc) -}}
{{- else -}}
{{- $delete = append $delete (merge (dict "action" "delete") $pvc) -}}
{{- end -}}
{{- end -}}
{{- $hooks := dict "postDelete" (list
      (dict "apiVersion" "v1" "kind" "PersistentVolumeClaim" "selector" $selectors.alertmanager "action" "delete")
      (dict "apiVersion" "v1" "kind" "PersistentVolumeClaim" "selector" $selectors.prometheus "action" "delete")) -}}
{{- with $patch }}{{ $_ := set $hooks "preUpgrade" . }}{{ end -}}
{{- with $delete }}{{ $_ := set $hooks "postUpgrade" . }}{{ end -}}
{{- toYaml $hooks -}}
{{- end -}}

{{/* loki-stack's StatefulSet is replaced on upgrade so a new volume size can apply. */}}
{{- define "cluster-addons.lokiStack.hooks" -}}
{{- $persistence := dig "loki" "persistence" dict .release.values -}}
preUpgrade:
  - apiVersion: apps/v1
    kind: StatefulSet
    name: loki-stack
    action: delete
{{- if $persistence.enabled }}
  - apiVersion: v1
    kind: PersistentVolumeClaim
    selector:
      app: loki
      release: loki-stack
    action: patch
    options:
      data:
        spec:
          resources:
            requests:
              storage: {{ $persistence.size }}
{{- else }}
postUpgrade:
  - apiVersion: v1
    kind: PersistentVolumeClaim
    selector:
      app: loki
      release: loki-stack
    action: delete
{{- end }}
{{- end -}}

{{- define "cluster-addons.lokiStack.datasource" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: loki-stack-grafana-datasource
  labels:
    grafana_datasource: "1"
data:
  loki-datasource.yaml: |-
    apiVersion: 1
    datasources:
      - name: Loki
        type: loki
        url: http://loki-stack.{{ .release.namespace }}:3100
        access: proxy
        version: 1
        isDefault: false
{{ end -}}
