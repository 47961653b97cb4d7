{{/*
Names and labels. The driver finds objects by these names and labels, so they
follow the real chart exactly: object names are "<release>-<component>" cut to
63 characters, labels use .Values.projectPrefix.
*/}}

{{- define "openstack-cluster.clusterName" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* (list $ "component") -> "<release>-<component>", cut to 63 characters. */}}
{{- define "openstack-cluster.componentName" -}}
{{- printf "%s-%s" (index . 0).Release.Name (index . 1) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "openstack-cluster.cloudCredentialsSecretName" -}}
{{- .Values.cloudCredentialsSecretName | default (include "openstack-cluster.componentName" (list . "cloud-credentials")) -}}
{{- end -}}

{{/* helm.sh/chart value: "<name>-<version>" as Helm charts conventionally write it. */}}
{{- define "openstack-cluster.chartLabel" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | trimSuffix "." | trimSuffix "_" -}}
{{- end -}}

{{/* Labels on cluster-level objects (Cluster, OpenStackCluster). */}}
{{- define "openstack-cluster.labels" -}}
helm.sh/chart: {{ include "openstack-cluster.chartLabel" . }}
{{ .Values.projectPrefix }}/managed-by: {{ .Release.Service }}
{{ .Values.projectPrefix }}/infrastructure-provider: openstack
{{ .Values.projectPrefix }}/cluster: {{ include "openstack-cluster.clusterName" . }}
{{- end -}}

{{/* (list $ "component"): the labels selectors match on. */}}
{{- define "openstack-cluster.componentSelectorLabels" -}}
{{- $ctx := index . 0 -}}
{{ $ctx.Values.projectPrefix }}/cluster: {{ include "openstack-cluster.clusterName" $ctx }}
{{ $ctx.Values.projectPrefix }}/component: {{ index . 1 }}
{{- end -}}

{{/* (list $ "component"): every label of a component's objects. */}}
{{- define "openstack-cluster.componentLabels" -}}
{{- $ctx := index . 0 -}}
helm.sh/chart: {{ include "openstack-cluster.chartLabel" $ctx }}
{{ $ctx.Values.projectPrefix }}/managed-by: {{ $ctx.Release.Service }}
{{ $ctx.Values.projectPrefix }}/infrastructure-provider: openstack
{{ include "openstack-cluster.componentSelectorLabels" . }}
{{- end -}}

{{/* (list $ nodeGroup): labels of a node group's objects. */}}
{{- define "openstack-cluster.nodeGroupLabels" -}}
{{- $ctx := index . 0 -}}
{{ include "openstack-cluster.componentLabels" (list $ctx "worker") }}
{{ $ctx.Values.projectPrefix }}/node-group: {{ (index . 1).name }}
{{- end -}}

{{/* (list $ nodeGroup): labels a node group's selectors match on. */}}
{{- define "openstack-cluster.nodeGroupSelectorLabels" -}}
{{- $ctx := index . 0 -}}
{{ include "openstack-cluster.componentSelectorLabels" (list $ctx "worker") }}
{{ $ctx.Values.projectPrefix }}/node-group: {{ (index . 1).name }}
{{- end -}}
