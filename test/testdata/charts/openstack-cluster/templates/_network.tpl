{{/*
Security group rules for workers, as a YAML list. An OVN load balancer sends
traffic straight to the nodes, so NodePorts must be open to the world then.
*/}}
{{- define "openstack-cluster.workerNodesSecurityGroupRules" -}}
{{- $rules := .Values.clusterNetworking.workerNodesSecurityGroupRules | default list -}}
{{- if eq (toString .Values.apiServer.loadBalancerProvider) "ovn" -}}
{{- $nodePort := dict "remoteIPPrefix" "0.0.0.0/0" "direction" "ingress" "etherType" "IPv4" "portRangeMin" 30000 "portRangeMax" 32767 -}}
{{- $rules = concat $rules (list
      (merge (dict "name" "Worker nodePort TCP" "protocol" "tcp") $nodePort)
      (merge (dict "name" "Worker nodePort UDP" "protocol" "udp") $nodePort)) -}}
{{- end -}}
{{- include "openstack-cluster.uniqueYaml" $rules -}}
{{- end -}}

{{/* A list without repeats (compared as YAML, so 30000 and 30000.0 are one), as YAML. */}}
{{- define "openstack-cluster.uniqueYaml" -}}
{{- $seen := dict -}}
{{- $unique := list -}}
{{- range $item := . -}}
{{- $key := toYaml $item | sha256sum -}}
{{- if not (hasKey $seen $key) -}}
{{- $_ := set $seen $key true -}}
{{- $unique = append $unique $item -}}
{{- end -}}
{{- end -}}
{{- toYaml $unique -}}
{{- end -}}
