{{/*
OpenStackMachineTemplate specs.

Machine templates are immutable in Cluster API, so a changed spec must become a
new object: the template is named "<base>-<first 8 hex of sha256(spec text)>"
and the MachineDeployment or KubeadmControlPlane is pointed at the new name,
which makes Cluster API roll the machines. The old template is kept (Helm
"keep") because Cluster API still needs it until the rollout is done.

The hashed text is the spec exactly as written below, in this key order and
with this whitespace, because that is what the real chart hashes: the same
inputs then give the same template names as the real chart. The control-plane
text starts with a newline and the node-group text does not; that difference is
part of the real chart's hashed text too.
*/}}

{{/*
(dict "ctx" $ "machine" <control plane or node group values> "imageField" <name for the error>
      "blockDevices" <map> "leadingNewline" <bool>) -> spec text
*/}}
{{- define "openstack-cluster.machineTemplateSpec" -}}
{{- $ctx := .ctx -}}
{{- $m := .machine -}}
{{- if .leadingNewline }}{{ "\n" }}{{ end -}}
template:
  spec:
    identityRef:
      name: {{ include "openstack-cluster.cloudCredentialsSecretName" $ctx }}
      cloudName: openstack
    flavor: {{ $m.machineFlavor | required .flavorError }}
{{- with $ctx.Values.machineSSHKeyName }}
    sshKeyName: {{ . }}
{{- end }}
{{- if or $m.machineConfigDrive .blockDevices }}
    configDrive: true
{{- end }}
{{- with $m.machineRootVolume }}
{{- if .diskSize }}
    rootVolume:
      sizeGiB: {{ .diskSize }}
{{- with .volumeType }}
      type: {{ . }}
{{- end }}
      availabilityZone: {{- include "openstack-cluster.volumeAvailabilityZone" .availabilityZone | nindent 8 }}
{{- end }}
{{- end }}
    image:
{{- if $m.machineImageId }}
      id: {{ $m.machineImageId }}
{{- else if $m.machineImage }}
      filter:
        name: {{ tpl $m.machineImage $ctx }}
{{- else if $ctx.Values.machineImageId }}
      id: {{ $ctx.Values.machineImageId }}
{{- else if $ctx.Values.machineImage }}
      filter:
        name: {{ tpl $ctx.Values.machineImage $ctx }}
{{- else }}
{{- fail .imageError }}
{{- end }}
{{- with .blockDevices }}
    additionalBlockDevices:
{{- range $name, $device := . }}
      - name: {{ $name }}
        sizeGiB: {{ required "size is required for a block device" $device.size }}
        storage:
          type: {{ $device.type | default "Volume" }}
          volume:
{{- with $device.volumeType }}
            type: {{ . }}
{{- end }}
            availabilityZone: {{- include "openstack-cluster.volumeAvailabilityZone" $device.availabilityZone | nindent 14 }}
{{- end }}
{{- end }}
{{- with $m.machineNetworking.ports }}
    ports: {{ include "openstack-cluster.ports" . | nindent 6 }}
{{- end }}
{{- with $m.serverGroupId }}
    serverGroup:
      id: {{ . }}
{{- end }}
{{- with mergeOverwrite (deepCopy ($ctx.Values.machineMetadata | default dict)) ($m.machineMetadata | default dict) }}
    serverMetadata:
{{- range $key, $value := . }}
      - key: {{ quote $key }}
        value: {{ quote $value }}
{{- end }}
{{- end }}
{{- end -}}

{{/* A volume's availability zone: a named one, or the machine's own. */}}
{{- define "openstack-cluster.volumeAvailabilityZone" -}}
{{- if . -}}
from: Name
name: {{ . }}
{{- else -}}
from: Machine
{{- end -}}
{{- end -}}

{{/*
Ports may still be written with CAPO v1alpha7 network filters (name, tags as a
comma-separated string); CAPO v1beta1 wants {id} or {filter: {...}} with tag lists.
*/}}
{{- define "openstack-cluster.ports" -}}
{{- $ports := list -}}
{{- range $port := . -}}
{{- $port = deepCopy $port -}}
{{- if and (kindIs "map" $port.network) (not (hasKey ($port.network | default dict) "filter")) -}}
{{- $_ := set $port "network" (include "openstack-cluster.neutronFilter" $port.network | fromYaml) -}}
{{- end -}}
{{- $ports = append $ports $port -}}
{{- end -}}
{{- toYaml $ports -}}
{{- end -}}

{{/* A v1alpha7 Neutron filter as a v1beta1 one. */}}
{{- define "openstack-cluster.neutronFilter" -}}
{{- if hasKey . "id" -}}
id: {{ .id }}
{{- else -}}
{{- $filter := omit . "tags" "tagsAny" "notTags" "notTagsAny" -}}
{{- range $key := list "tags" "tagsAny" "notTags" "notTagsAny" -}}
{{- with index $ $key -}}
{{- $_ := set $filter $key (kindIs "string" . | ternary (splitList "," (toString .)) .) -}}
{{- end -}}
{{- end -}}
{{- dict "filter" $filter | toYaml -}}
{{- end -}}
{{- end -}}
