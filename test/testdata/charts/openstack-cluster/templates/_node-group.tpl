{{/*
(list $ nodeGroup) -> a node group's KubeadmConfigTemplate spec as YAML. Its
sha256 names the template, so any change to it rolls the group's machines.
Every node gets the label <projectPrefix>/node-group=<name>, unless the
group's nodeLabels set that label themselves.
*/}}
{{- define "openstack-cluster.nodeGroup.kubeadmConfigSpec" -}}
{{- $ctx := index . 0 -}}
{{- $ng := index . 1 -}}
{{- $labels := merge (deepCopy ($ng.nodeLabels | default dict)) (dict (printf "%s/node-group" $ctx.Values.projectPrefix) $ng.name) -}}
{{- $nodeLabels := dict "joinConfiguration" (include "openstack-cluster.kubeadm.nodeRegistrationLabels" $labels | fromYaml) -}}
{{- list
      $nodeLabels
      (include "openstack-cluster.kubeadm.common" (list $ctx ($ng.kubeadmConfigSpec | default dict)) | fromYaml)
      (omit (include "openstack-cluster.kubeadm.osDistro" $ctx | fromYaml) "initConfiguration")
      (pick (include "openstack-cluster.kubeadm.apiServerAuth" $ctx | fromYaml) "preKubeadmCommands")
    | include "openstack-cluster.mergeConcatAll" -}}
{{- end -}}
