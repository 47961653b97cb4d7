{{/* The control plane's OpenStackMachineTemplate spec text (see _machine.tpl). */}}
{{- define "openstack-cluster.controlPlane.machineTemplateSpec" -}}
{{- $blockDevices := deepCopy (.Values.controlPlane.additionalBlockDevices | default dict) -}}
{{- with .Values.etcd.blockDevice -}}
{{- $_ := set $blockDevices "etcd" . -}}
{{- end -}}
{{- include "openstack-cluster.machineTemplateSpec" (dict
      "ctx" .
      "machine" .Values.controlPlane
      "blockDevices" $blockDevices
      "leadingNewline" true
      "flavorError" ".Values.controlPlane.machineFlavor is required"
      "imageError" "One of controlPlane.machineImageId, controlPlane.machineImage, machineImageId or machineImage is required") -}}
{{- end -}}

{{/*
The KubeadmControlPlane's kubeadmConfigSpec: the fragments below merged in this
order (see _merge.tpl), without kubeProxyConfiguration, which kubeadm does not
accept there and is written to a file appended to kubeadm's config instead.
*/}}
{{- define "openstack-cluster.controlPlane.kubeadmConfigSpec" -}}
{{- $userSpec := .Values.controlPlane.kubeadmConfigSpec | default dict -}}
{{- $merged := list
      (include "openstack-cluster.controlPlane.nodeLabels" . | fromYaml)
      (include "openstack-cluster.controlPlane.oidc" . | fromYaml)
      (include "openstack-cluster.controlPlane.etcd" . | fromYaml)
      (include "openstack-cluster.controlPlane.etcdEncryption" . | fromYaml)
      (include "openstack-cluster.controlPlane.cilium" . | fromYaml)
      (include "openstack-cluster.controlPlane.admissionConfiguration" . | fromYaml)
      (include "openstack-cluster.kubeadm.common" (list . $userSpec) | fromYaml)
      (include "openstack-cluster.kubeadm.osDistro" . | fromYaml)
      (include "openstack-cluster.kubeadm.apiServerAuth" . | fromYaml)
      (include "openstack-cluster.controlPlane.kubeProxy" (list . $userSpec.kubeProxyConfiguration) | fromYaml)
    | include "openstack-cluster.mergeConcatAll" | fromYaml -}}
{{- omit $merged "kubeProxyConfiguration" | toYaml -}}
{{- end -}}

{{- define "openstack-cluster.controlPlane.nodeLabels" -}}
{{- with .Values.controlPlane.nodeLabels }}
initConfiguration: {{- include "openstack-cluster.kubeadm.nodeRegistrationLabels" . | nindent 2 }}
joinConfiguration: {{- include "openstack-cluster.kubeadm.nodeRegistrationLabels" . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "openstack-cluster.controlPlane.oidc" -}}
{{- with .Values.oidc }}
{{- if .issuerUrl }}
clusterConfiguration:
  apiServer:
    extraArgs:
      oidc-issuer-url: {{ quote .issuerUrl }}
      oidc-client-id: {{ required "clientId is required for OIDC" .clientId | quote }}
      oidc-username-claim: {{ quote .usernameClaim }}
      oidc-username-prefix: {{ quote .usernamePrefix }}
      oidc-groups-claim: {{ quote .groupsClaim }}
      oidc-groups-prefix: {{ quote .groupsPrefix }}
      oidc-signing-algs: {{ quote .signingAlgs }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
etcd's data directory and flags. With a dedicated block device (tagged "etcd"
on the machine), the device is formatted and mounted on the data directory and
kubeadm is told to accept the directory's lost+found.
*/}}
{{- define "openstack-cluster.controlPlane.etcd" -}}
{{- $dataDir := .Values.etcd.dataDir }}
clusterConfiguration:
  etcd:
    local:
      dataDir: {{ $dataDir }}
      extraArgs: {{- toYaml .Values.etcd.extraArgs | nindent 8 }}
{{- if .Values.etcd.blockDevice }}
{{- $preflight := printf "diravailable-%s" (replace "/" "-" $dataDir) }}
initConfiguration:
  nodeRegistration:
    ignorePreflightErrors:
      - {{ $preflight }}
joinConfiguration:
  nodeRegistration:
    ignorePreflightErrors:
      - {{ $preflight }}
diskSetup:
  filesystems:
    - device: /dev/disk/openstack/by-tag/etcd
      filesystem: ext4
      label: etcd_disk
mounts:
  - - LABEL=etcd_disk
    - {{ $dataDir }}
{{- end }}
{{- end -}}

{{/*
Encryption of Secrets at rest. The key comes from the Secret
"<release>-etcd-key" (key "key"), which the caller creates beforehand; the
chart only reads it. Without it the real chart fails to render, and so does
this one (so a client-only render, which cannot look it up, fails too).
*/}}
{{- define "openstack-cluster.controlPlane.etcdEncryption" -}}
{{- with .Values.etcd.encryption }}
{{- if .enabled }}
{{- $keySecretName := printf "%s-etcd-key" $.Release.Name }}
{{- $keySecret := lookup "v1" "Secret" $.Release.Namespace $keySecretName | default dict }}
{{- $key := dig "data" "key" "" $keySecret }}
{{- if not $key }}
{{- fail (printf "etcd.encryption.enabled needs the key in Secret %s/%s (data key \"key\")" $.Release.Namespace $keySecretName) }}
{{- end }}
preKubeadmCommands:
  - mkdir -p /etc/kubernetes/enc
  - mkdir -p /etc/kubernetes/patches
initConfiguration:
  patches:
    directory: /etc/kubernetes/patches
joinConfiguration:
  patches:
    directory: /etc/kubernetes/patches
clusterConfiguration:
  apiServer:
    extraArgs:
      encryption-provider-config: /etc/kubernetes/enc/enc.yaml
files:
  - path: /etc/kubernetes/patches/kube-apiserver1+strategic.yaml
    permissions: "0644"
    owner: root:root
    content: |
      spec:
        containers:
          - name: kube-apiserver
            volumeMounts:
              - mountPath: /etc/kubernetes/enc
                name: kube-enc
                readOnly: true
        volumes:
          - name: kube-enc
            hostPath:
              path: /etc/kubernetes/enc
              type: DirectoryOrCreate
  - path: /etc/kubernetes/enc/enc.yaml
    permissions: "0644"
    owner: root:root
    content: |
      apiVersion: apiserver.config.k8s.io/v1
      kind: EncryptionConfiguration
      resources:
        - resources: {{- toYaml .resources | nindent 12 }}
          providers:
            - {{ .provider }}:
                keys:
                  - name: key1
                    secret: {{ $key }}
            # Still read Secrets written before encryption was enabled.
            - identity: {}
{{- end }}
{{- end }}
{{- end -}}

{{/* Cilium's kube-proxy replacement (its default) means kubeadm must not install kube-proxy. */}}
{{- define "openstack-cluster.controlPlane.cilium" -}}
{{- $addons := .Values.addons | default dict }}
{{- if and $addons.enabled (dig "cni" "enabled" true $addons) (eq (dig "cni" "type" "calico" $addons) "cilium") (dig "cni" "cilium" "release" "values" "kubeProxyReplacement" true $addons) }}
initConfiguration:
  skipPhases:
    - addon/kube-proxy
{{- end }}
{{- end -}}

{{/* kube-apiserver reads its admission plugin configuration from the admission-configuration Secret. */}}
{{- define "openstack-cluster.controlPlane.admissionConfiguration" -}}
files:
  - path: /etc/kubernetes/admission/configuration.yaml
    contentFrom:
      secret:
        name: {{ include "openstack-cluster.componentName" (list . "admission-configuration") }}
        key: admission-configuration.yaml
    owner: root:root
    permissions: "0644"
clusterConfiguration:
  apiServer:
    extraArgs:
      admission-control-config-file: /etc/kubernetes/admission/configuration.yaml
    extraVolumes:
      - name: admission-configuration
        hostPath: /etc/kubernetes/admission
        mountPath: /etc/kubernetes/admission
        readOnly: true
        pathType: Directory
{{- end -}}

{{/* (list $ kubeProxyConfiguration) -> a file appended to kubeadm's own config */}}
{{- define "openstack-cluster.controlPlane.kubeProxy" -}}
{{- $ctx := index . 0 }}
{{- $flatcar := eq $ctx.Values.osDistro "flatcar" }}
{{- $path := $flatcar | ternary "/etc/kube-proxy-configuration.yaml" "/run/kubeadm/kube-proxy-configuration.yaml" }}
{{- $kubeadmPath := $flatcar | ternary "/etc/kubeadm.yml" "/run/kubeadm/kubeadm.yaml" }}
{{- with index . 1 }}
files:
  - path: {{ $path }}
    content: |
      ---
      apiVersion: kubeproxy.config.k8s.io/v1alpha1
      kind: KubeProxyConfiguration
      {{- toYaml . | nindent 6 }}
    owner: root:root
    permissions: "0644"
preKubeadmCommands:
  - cat {{ $path }} >> {{ $kubeadmPath }}
{{- end }}
{{- end -}}
