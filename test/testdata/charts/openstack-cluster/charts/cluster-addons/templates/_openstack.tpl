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
