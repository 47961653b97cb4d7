{{/*
The manifest template of the workload cluster's Secret "cloud-config": the
cluster's clouds.yaml (copied by the provider from the identity Secret, where
the cloud is always named "openstack") and a cloud.conf for the CCM and CSI
drivers built from openstack.cloudConfig. Network name and external network
come from the OpenStackCluster's status unless given.
*/}}
{{- define "cluster-addons.cloudConfig" -}}
{{- include "cluster-addons.cloudConfigText" . | include "cluster-addons.trimTrailingBlankLine" -}}
{{- end -}}

{{- define "cluster-addons.cloudConfigText" -}}
{{- $sections := .Values.openstack.cloudConfig | default dict -}}
{{- $networking := $sections.Networking | default dict -}}
{{- $loadBalancer := $sections.LoadBalancer | default dict -}}
apiVersion: v1
kind: Secret
metadata:
  name: cloud-config
data:
  {{ "{{" }} cloud_identity.data | toyaml | indent(2) {{ "}}" }}
stringData:
  cloud.conf: |
    [Global]
    use-clouds=true
    clouds-file=/etc/config/clouds.yaml
    cloud=openstack
{%- if "cacert" in cloud_identity.data %}
    ca-file=/etc/config/cacert
{%- else %}
    tls-insecure=true
{%- endif %}
    [Networking]
{{- if hasKey $networking "internal-network-name" }}
    internal-network-name={{ index $networking "internal-network-name" }}
{{- else }}
    internal-network-name={{ "{{" }} infra_cluster.status.network.name {{ "}}" }}
{{- end }}
{{- range $key, $value := omit $networking "internal-network-name" }}
    {{ $key }}={{ $value }}
{{- end }}
    [LoadBalancer]
{{- if hasKey $loadBalancer "floating-network-id" }}
    floating-network-id={{ index $loadBalancer "floating-network-id" }}
{{- else }}
  {%- if "externalNetwork" in infra_cluster.status %}
    floating-network-id={{ "{{" }} infra_cluster.status.externalNetwork.id {{ "}}" }}
  {%- endif %}
{{- end }}
{{- range $key, $value := omit $loadBalancer "floating-network-id" }}
    {{ $key }}={{ $value }}
{{- end }}
{{- range $section, $items := omit $sections "Global" "LoadBalancer" "Networking" }}
    [{{ $section }}]
{{- range $key, $value := $items }}
    {{ $key }}={{ $value }}
{{- end }}
    {{ "" }}
{{- end }}
{{- end -}}

{{/* The CCM reads the cloud-config Secret; Reloader (if on) restarts it when the Secret changes. */}}
{{- define "cluster-addons.ccm.defaults" -}}
secret:
  create: false
cluster:
  name: {{ include "cluster-addons.clusterName" . }}
controllerExtraArgs: |-
  - --use-service-account-credentials=false
nodeSelector:
  node-role.kubernetes.io/control-plane: ""
tolerations:
  - key: node.cloudprovider.kubernetes.io/uninitialized
    value: "true"
    effect: NoSchedule
  - key: node-role.kubernetes.io/master
    effect: NoSchedule
  - key: node-role.kubernetes.io/control-plane
    effect: NoSchedule
{{- if .Values.reloader.enabled }}
commonAnnotations:
  secret.reloader.stakater.com/reload: cloud-config
{{- end }}
{{ end -}}

{{/* The chart's own storage class is off: this chart writes storage classes itself (below). */}}
{{- define "cluster-addons.csiCinder.defaults" -}}
csi:
  plugin:
    # This has to be non-empty or the chart fails to render
    volumes:
      - name: cacert
        emptyDir: {}
    volumeMounts:
      - name: cloud-config
        mountPath: /etc/config
        readOnly: true
      - name: cloud-config
        mountPath: /etc/kubernetes
        readOnly: true
  provisioner:
    topology: "false"
secret:
  enabled: true
  create: false
  name: cloud-config
storageClass:
  enabled: false
clusterID: {{ include "cluster-addons.clusterName" . }}
{{- if .Values.reloader.enabled }}
commonAnnotations:
  secret.reloader.stakater.com/reload: cloud-config
{{- end }}
{{ end -}}

{{- define "cluster-addons.csiCinder.defaultStorageClass" -}}
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: {{ .name }}
{{- if .isClusterDefault }}
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
{{- end }}
provisioner: cinder.csi.openstack.org
parameters:
  availability: {{ .availabilityZone }}
{{- with .volumeType }}
  type: {{ . }}
{{- end }}
{{- with .fstype }}
  fstype: {{ . }}
{{- end }}
reclaimPolicy: {{ .reclaimPolicy }}
allowVolumeExpansion: {{ .allowVolumeExpansion }}
volumeBindingMode: {{ .volumeBindingMode }}
{{- with .allowedTopologies }}
allowedTopologies: {{- toYaml . | nindent 2 }}
{{- end }}
{{ end -}}

{{/* Additional classes take the default class's defaults where a field is left out. */}}
{{- define "cluster-addons.csiCinder.additionalStorageClass" -}}
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: {{ required "name is required for storage classes" .name }}
provisioner: cinder.csi.openstack.org
parameters:
  availability: {{ .availabilityZone | default "nova" }}
{{- with .volumeType }}
  type: {{ . }}
{{- end }}
{{- with .fstype }}
  fstype: {{ . }}
{{- end }}
reclaimPolicy: {{ .reclaimPolicy | default "Delete" }}
allowVolumeExpansion: {{ dig "allowVolumeExpansion" true . }}
volumeBindingMode: {{ .volumeBindingMode | default "WaitForFirstConsumer" }}
{{- with .allowedTopologies }}
allowedTopologies: {{- toYaml . | nindent 2 }}
{{- end }}
{{ end -}}

{{/*
Manila CSI forwards to the node plugin of each share protocol. With the CephFS
CSI addon on, CephFS shares are wired by default; any other protocol comes
from the values (shareProtocols).
*/}}
{{- define "cluster-addons.csiManila.defaults" -}}
csimanila:
  clusterID: {{ include "cluster-addons.clusterName" . }}
{{- if .Values.csi.cephfs.enabled }}
shareProtocols:
  - protocolSelector: CEPHFS
    fsGroupPolicy: None
    fwdNodePluginEndpoint:
      dir: /var/lib/kubelet/plugins/cephfs.csi.ceph.com
      sockFile: csi.sock
{{- end }}
# Allow the node plugin to run on the control plane nodes
nodeplugin:
  tolerations:
    - key: node-role.kubernetes.io/master
      effect: NoSchedule
    - key: node-role.kubernetes.io/control-plane
      effect: NoSchedule
{{ end -}}

{{/*
(list $ storageClass) -> a Manila storage class. Provisioner and share type
default to CephFS's only when the CephFS CSI addon is on; otherwise the class
must name them, as in the real chart. The credentials are the
csi-manila-credentials Secret in the OpenStack namespace.
*/}}
{{- define "cluster-addons.csiManila.storageClass" -}}
{{- $ctx := index . 0 -}}
{{- $sc := index . 1 -}}
{{- $cephfs := $ctx.Values.csi.cephfs.enabled -}}
{{- $namespace := $ctx.Values.openstack.targetNamespace -}}
{{- $parameters := $sc.parameters | default dict -}}
{{- $provisioner := $sc.provisioner | default (ternary "cephfs.manila.csi.openstack.org" "" $cephfs) -}}
{{- if not $provisioner }}
{{- fail (printf "Unable to determine provisioner for storage class - %s" $sc.name) }}
{{- end }}
{{- $type := $parameters.type | default (ternary "cephfs" "" $cephfs) -}}
{{- if not $type }}
{{- fail (printf "Unable to determine share type for storage class - %s" $sc.name) }}
{{- end -}}
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: {{ required "name is required for storage classes" $sc.name }}
{{- if $sc.isClusterDefault }}
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
{{- end }}
provisioner: {{ $provisioner }}
parameters:
{{- range $stage := list "provisioner" "controller-expand" "node-stage" "node-publish" }}
  csi.storage.k8s.io/{{ $stage }}-secret-name: csi-manila-credentials
  csi.storage.k8s.io/{{ $stage }}-secret-namespace: {{ $namespace }}
{{- end }}
  type: {{ $type }}
{{- with omit $parameters "type" }}
{{- toYaml . | nindent 2 }}
{{- end }}
reclaimPolicy: {{ $sc.reclaimPolicy | default "Delete" }}
allowVolumeExpansion: {{ dig "allowVolumeExpansion" true $sc }}
volumeBindingMode: {{ $sc.volumeBindingMode | default "WaitForFirstConsumer" }}
{{- with $sc.allowedTopologies }}
allowedTopologies: {{ toYaml . | nindent 2 }}
{{- end }}
{{ end -}}
