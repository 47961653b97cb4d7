{{/*
Names, labels and the two shapes every addon takes.

An addon is an object of the cluster-api-addon-provider (addons.stackhpc.com):
a HelmRelease installed into the workload cluster with values read from a
Secret "<release>-<addon>-config" (keys "defaults" then "overrides", merged in
that order), or a Manifests object applying manifest templates. Values and
templates are Jinja-rendered by the provider with the cluster in scope, which
is why some of them contain {{ }} or {% %}.
*/}}

{{- define "cluster-addons.clusterName" -}}
{{- .Values.clusterName | default .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* (list $ "component") -> "<release>-<component>", cut to 63 characters. */}}
{{- define "cluster-addons.componentName" -}}
{{- printf "%s-%s" (index . 0).Release.Name (index . 1) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Within the parent chart this is "addons-<version>": Helm names a subchart by its alias. */}}
{{- define "cluster-addons.chartLabel" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | trimSuffix "." | trimSuffix "_" -}}
{{- end -}}

{{/* (list $ "component"). The prefix is fixed here, unlike the parent's projectPrefix. */}}
{{- define "cluster-addons.componentLabels" -}}
{{- $ctx := index . 0 -}}
helm.sh/chart: {{ include "cluster-addons.chartLabel" $ctx }}
capi.stackhpc.com/managed-by: {{ $ctx.Release.Service }}
capi.stackhpc.com/cluster: {{ include "cluster-addons.clusterName" $ctx }}
capi.stackhpc.com/component: {{ index . 1 }}
{{- end -}}

{{/*
(list $ addon) -> a values Secret and a HelmRelease. addon is a dict:
  component     names both objects and is their component label
  chart         {repo, name, version}
  namespace     target namespace in the workload cluster
  releaseName   Helm release name in the workload cluster
  sources       list of (list key text): Secret keys, read in this order
  secretSuffix  "config" unless given
  unwatched     true: the Secret lacks the provider's watch label
  annotations, lifecycleHooks   optional
*/}}
{{- define "cluster-addons.helmRelease" -}}
{{- $ctx := index . 0 -}}
{{- $addon := index . 1 -}}
{{- $name := include "cluster-addons.componentName" (list $ctx $addon.component) -}}
{{- $secretName := printf "%s-%s" $name ($addon.secretSuffix | default "config") }}
---
apiVersion: v1
kind: Secret
metadata:
  name: {{ $secretName }}
  labels:
    {{- include "cluster-addons.componentLabels" (list $ctx $addon.component) | nindent 4 }}
{{- if not $addon.unwatched }}
    {{- /* The provider re-renders the addon when a watched Secret changes. */}}
    addons.stackhpc.com/watch: ""
{{- end }}
stringData:
{{- range $source := $addon.sources }}
  {{ index $source 0 }}: {{ index $source 1 | toJson }}
{{- end }}
---
apiVersion: addons.stackhpc.com/v1alpha1
kind: HelmRelease
metadata:
  name: {{ $name }}
  labels: {{- include "cluster-addons.componentLabels" (list $ctx $addon.component) | nindent 4 }}
{{- with $addon.annotations }}
  annotations: {{- toYaml . | nindent 4 }}
{{- end }}
spec:
  clusterName: {{ include "cluster-addons.clusterName" $ctx }}
  bootstrap: true
  chart: {{- toYaml $addon.chart | nindent 4 }}
  targetNamespace: {{ $addon.namespace }}
  releaseName: {{ $addon.releaseName }}
  valuesSources:
{{- range $source := $addon.sources }}
    - secret:
        name: {{ $secretName }}
        key: {{ index $source 0 }}
{{- end }}
{{- with $addon.lifecycleHooks }}
  lifecycleHooks: {{- toYaml . | nindent 4 }}
{{- end }}
{{- end -}}

{{/*
(list $ manifests) -> a Manifests object. manifests is a dict:
  name        object name suffix; component label unless "component" is given
  namespace, releaseName
  sources     the manifestSources list
*/}}
{{- define "cluster-addons.manifests" -}}
{{- $ctx := index . 0 -}}
{{- $m := index . 1 }}
---
apiVersion: addons.stackhpc.com/v1alpha1
kind: Manifests
metadata:
  name: {{ include "cluster-addons.componentName" (list $ctx $m.name) }}
  labels: {{- include "cluster-addons.componentLabels" (list $ctx ($m.component | default $m.name)) | nindent 4 }}
spec:
  clusterName: {{ include "cluster-addons.clusterName" $ctx }}
  bootstrap: true
  targetNamespace: {{ $m.namespace }}
  releaseName: {{ $m.releaseName }}
  manifestSources: {{- toYaml $m.sources | nindent 4 }}
{{- end -}}

{{/*
Text ending in one line break and no blank (space-only) line: a manifest
template as Helm sends it when it closes a document, since Helm trims the
space around each document.
*/}}
{{- define "cluster-addons.trimTrailingBlankLine" -}}
{{- printf "%s\n" (regexReplaceAll "\\n *$" . "") -}}
{{- end -}}

{{/* Values as the YAML text of an "overrides" key. */}}
{{- define "cluster-addons.valuesText" -}}
{{- printf "%s\n" (toYaml .) -}}
{{- end -}}

{{/*
(list "file-name.json" ...) -> a ConfigMap manifest template of Grafana
dashboards. The real chart ships full dashboards; this test chart ships an
empty one per file, since nothing here runs Grafana.
*/}}
{{- define "cluster-addons.dashboards" -}}
{{- $name := index . 0 -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $name }}
  labels:
    grafana_dashboard: "1"
data:
{{- range $file := rest . }}
  {{ $file }}: |
    {% raw %}
    {"title": {{ $file | trimSuffix ".json" | toJson }}, "panels": []}
    {% endraw %}
{{- end }}
{{ end -}}
