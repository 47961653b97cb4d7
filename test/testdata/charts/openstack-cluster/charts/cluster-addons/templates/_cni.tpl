{{/*
Calico policies keeping pods away from the Nova metadata service
(169.254.169.254), which would hand them the node's credentials; only
openstack-system may reach it.
*/}}
{{- define "cluster-addons.calico.globalNetworkPolicy" -}}
{{- $policy := .Values.cni.calico.globalNetworkPolicy -}}
{{- $text := include "cluster-addons.calico.globalNetworkPolicyText" (list . $policy) -}}
{{- include "cluster-addons.trimTrailingBlankLine" $text -}}
{{- end -}}

{{- define "cluster-addons.calico.globalNetworkPolicyText" -}}
{{- $ctx := index . 0 -}}
{{- $policy := index . 1 -}}
---
apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata:
  name: default.{{ include "cluster-addons.componentName" (list $ctx "deny-egress") }}
spec:
  order: {{ $policy.denyPriority }}
  namespaceSelector: {{ $policy.denyNamespaceSelector }}
  types:
    - Egress
  egress:
    - action: Deny
      ipVersion: 4
      destination:
        nets:
{{- include "cluster-addons.calico.nets" $policy.denyEgressCidrs }}
    - action: Deny
      ipVersion: 6
      destination:
        nets:
{{- include "cluster-addons.calico.nets" $policy.denyv6EgressCidrs }}
---
apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata:
  name: default.{{ include "cluster-addons.componentName" (list $ctx "allow-global-egress") }}
spec:
  order: {{ $policy.allowPriority }}
  types:
    - Egress
  egress:
    - action: Allow
      ipVersion: 4
      destination:
        nets:
{{- include "cluster-addons.calico.nets" $policy.allowEgressCidrs }}
    - action: Allow
      ipVersion: 6
      destination:
        nets:
{{- include "cluster-addons.calico.nets" $policy.allowv6EgressCidrs }}
{{- end -}}

{{/* The real chart leaves a blank (space-indented) line after each CIDR; kept so the text is identical. */}}
{{- define "cluster-addons.calico.nets" -}}
{{- range . }}
          - {{ . }}
        {{ "" }}
{{- end }}
{{- end -}}

{{/*
Cilium's kube-proxy replacement (on unless the values turn it off) must know
the API server's address; the provider fills it in from the Cluster object.
*/}}
{{- define "cluster-addons.cilium.defaults" -}}
# Use IPs allocated to each node by Kubernetes
# This respects the pod CIDR specified in the CAPI cluster resource
ipam:
  mode: kubernetes
{{- if dig "kubeProxyReplacement" true .Values.cni.cilium.release.values }}
kubeProxyReplacement: true
k8sServiceHost: {{ "{{" }} cluster.spec.controlPlaneEndpoint.host {{ "}}" }}
k8sServicePort: {{ "{{" }} cluster.spec.controlPlaneEndpoint.port {{ "}}" }}
{{- end }}
{{ end -}}
