{{/*
kubeadm config fragments shared by the control plane (KubeadmControlPlane) and
the node groups (KubeadmConfigTemplate). Each returns YAML of a partial
kubeadmConfigSpec; see _merge.tpl for how they combine.
*/}}

{{/* (list $ userSpec) -> trusted CAs + containerd + packages + the user's own spec */}}
{{- define "openstack-cluster.kubeadm.common" -}}
{{- $ctx := index . 0 -}}
{{- list
      (include "openstack-cluster.kubeadm.trustedCAs" $ctx | fromYaml)
      (include "openstack-cluster.kubeadm.containerd" $ctx | fromYaml)
      (include "openstack-cluster.kubeadm.additionalPackages" $ctx | fromYaml)
      (index . 1)
    | include "openstack-cluster.mergeConcatAll" -}}
{{- end -}}

{{/* Extra CAs in the nodes' trust store, e.g. for a private registry. */}}
{{- define "openstack-cluster.kubeadm.trustedCAs" -}}
{{- with .Values.trustedCAs }}
files:
{{- range $name, $pem := . }}
  - path: /usr/local/share/ca-certificates/{{ $name }}.crt
    content: {{ printf "%s\n" (regexReplaceAll "\n+$" $pem "") | toJson }}
    owner: root:root
    permissions: "0644"
{{- end }}
preKubeadmCommands:
  - update-ca-certificates
{{- end }}
{{- end -}}

{{/* containerd: registry mirrors (certs.d hosts.toml), registry credentials. */}}
{{- define "openstack-cluster.kubeadm.containerd" -}}
files:
  - path: /etc/containerd/conf.d/.keepdir
    content: |
      # This file is created by the capi-helm-chart to ensure that its parent directory exists
    owner: root:root
    permissions: "0644"
  - path: /etc/containerd/certs.d/.keepdir
    content: |
      # This file is created by the capi-helm-chart to ensure that its parent directory exists
    owner: root:root
    permissions: "0644"
{{- range $registry, $spec := .Values.registryMirrors }}
  - path: /etc/containerd/certs.d/{{ $registry }}/hosts.toml
    content: {{ include "openstack-cluster.registryHostsToml" (list $registry $spec) | toJson }}
    owner: root:root
    permissions: "0644"
{{- end }}
{{- if .Values.registryAuth }}
  - path: /etc/containerd/conf.d/auth.toml
    contentFrom:
      secret:
        name: {{ include "openstack-cluster.componentName" (list . "containerd-auth") }}
        key: auth.toml
    owner: root:root
    permissions: "0644"
{{- end }}
{{- if ne .Values.osDistro "flatcar" }}
{{- /* Point containerd's CRI plugin at certs.d once; flatcar images already do. */}}
preKubeadmCommands:
  - |-
    /usr/bin/bash -s <<EOF
    grep -q '\[plugins."io.containerd.grpc.v1.cri".registry\]' /etc/containerd/config.toml && exit
    cat <<CONTENT >> /etc/containerd/config.toml
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "/etc/containerd/certs.d"
    CONTENT
    systemctl restart containerd
    EOF
{{- end }}
{{- end -}}

{{/*
(list registry spec) -> certs.d hosts.toml text. The spec is a list of mirror
URLs, or {upstream, mirrors: [URL or {url, capabilities, skipVerify, overridePath}]}.
The text starts with an empty line, as the real chart's does: node-group
templates are named by a checksum of their spec, so it must match to the byte.
*/}}
{{- define "openstack-cluster.registryHostsToml" -}}
{{- $registry := index . 0 -}}
{{- $spec := index . 1 -}}
{{- $upstream := printf "https://%s" (eq $registry "docker.io" | ternary "registry-1.docker.io" $registry) -}}
{{- $mirrors := $spec -}}
{{- if kindIs "map" $spec -}}
{{- $upstream = dig "upstream" $upstream $spec -}}
{{- $mirrors = dig "mirrors" list $spec -}}
{{- end -}}
{{ "\n" }}
{{- with $upstream }}server = {{ toJson . }}{{ "\n" }}{{ end -}}
{{- range $mirror := $mirrors -}}
{{- $m := kindIs "map" $mirror | ternary $mirror (dict "url" $mirror) -}}
[host.{{ required "unable to determine mirror url" $m.url | toJson }}]
capabilities = [{{ range $i, $c := dig "capabilities" list $m | default (list "pull" "resolve") }}{{ if $i }}, {{ end }}{{ toJson $c }}{{ end }}]
skip_verify = {{ dig "skipVerify" false $m }}
override_path = {{ dig "overridePath" true $m }}
{{ end -}}
{{- end -}}

{{- define "openstack-cluster.kubeadm.additionalPackages" -}}
{{- with .Values.additionalPackages }}
preKubeadmCommands:
  - apt update -y
  - apt install -y {{ join " " . }}
{{- end }}
{{- end -}}

{{/* Flatcar boots with Ignition and names nodes from the metadata service. */}}
{{- define "openstack-cluster.kubeadm.osDistro" -}}
{{- if eq .Values.osDistro "flatcar" }}
initConfiguration:
  nodeRegistration:
    name: ${COREOS_OPENSTACK_HOSTNAME}
joinConfiguration:
  nodeRegistration:
    name: ${COREOS_OPENSTACK_HOSTNAME}
preKubeadmCommands:
  - export COREOS_OPENSTACK_HOSTNAME=${COREOS_OPENSTACK_HOSTNAME%.*}
  - envsubst < /etc/kubeadm.yml > /etc/kubeadm.yml.tmp
  - mv /etc/kubeadm.yml.tmp /etc/kubeadm.yml
format: ignition
ignition:
  containerLinuxConfig:
    additionalConfig: |
      systemd:
        units:
        - name: coreos-metadata-sshkeys@.service
          enabled: true
        - name: kubeadm.service
          enabled: true
          dropins:
          - name: 10-flatcar.conf
            contents: |
              [Unit]
              Requires=containerd.service coreos-metadata.service
              After=containerd.service coreos-metadata.service
              [Service]
              EnvironmentFile=/run/metadata/flatcar
{{- end }}
{{- end -}}

{{/* labels map -> the nodeRegistration that makes kubelet apply them */}}
{{- define "openstack-cluster.kubeadm.nodeRegistrationLabels" -}}
{{- $labels := . -}}
nodeRegistration:
  kubeletExtraArgs:
    node-labels: {{ include "openstack-cluster.joinLabels" $labels | quote }}
{{- end -}}

{{- define "openstack-cluster.joinLabels" -}}
{{- $labels := . -}}
{{- range $i, $key := keys $labels | sortAlpha }}{{ if $i }},{{ end }}{{ $key }}={{ index $labels $key }}{{ end -}}
{{- end -}}

{{/*
API server log level and the authentication/authorization webhook
(authWebhook: none, k8s-keystone-auth or azimuth-authorization-webhook).
The webhook config files are written on every control-plane node and
kube-apiserver is patched to use them.
*/}}
{{- define "openstack-cluster.kubeadm.apiServerAuth" -}}
{{- $webhook := .Values.authWebhook }}
clusterConfiguration:
  apiServer:
    extraArgs:
      v: {{ .Values.apiServer.logLevel | quote }}
{{- if eq $webhook "azimuth-authorization-webhook" }}
      authorization-config: /etc/kubernetes/webhooks/authorization_config.yaml
{{- end }}
{{- if ne $webhook "none" }}
initConfiguration:
  patches:
    directory: /etc/kubernetes/patches
joinConfiguration:
  patches:
    directory: /etc/kubernetes/patches
preKubeadmCommands:
  - mkdir -p /etc/kubernetes/webhooks
  - mkdir -p /etc/kubernetes/patches
{{- if eq $webhook "k8s-keystone-auth" }}
  - mkdir -p /etc/kubernetes/keystone-auth
postKubeadmCommands:
  - cp /etc/kubernetes/manifests/kube-apiserver.yaml /etc/kubernetes/keystone-auth/kube-apiserver.yaml
  - kubectl kustomize /etc/kubernetes/keystone-auth -o /etc/kubernetes/manifests/kube-apiserver.yaml
files:
{{- include "openstack-cluster.kubeadm.webhookMountFile" . }}
  - path: /etc/kubernetes/keystone-auth/kustomization.yml
    permissions: "0644"
    owner: root:root
    content: |
      resources:
      - kube-apiserver.yaml
      patches:
      - patch: |-
          - op: add
            path: /spec/containers/0/command/-
            value: --authentication-token-webhook-config-file=/etc/kubernetes/webhooks/keystone_webhook_config.yaml
          - op: add
            path: /spec/containers/0/command/-
            value: --authorization-webhook-config-file=/etc/kubernetes/webhooks/keystone_webhook_config.yaml
          - op: add
            path: /spec/containers/0/command/-
            value: --authorization-mode=Webhook
        target:
          kind: Pod
  - path: /etc/kubernetes/webhooks/keystone_webhook_config.yaml
    permissions: "0644"
    owner: root:root
    content: {{ include "openstack-cluster.webhookKubeconfig" (dict "server" "https://127.0.0.1:8443/webhook") | printf "%s\n" | toJson }}
{{- else if eq $webhook "azimuth-authorization-webhook" }}
{{- with .Values.azimuthAuthorizationWebhook }}
files:
{{- include "openstack-cluster.kubeadm.webhookMountFile" . }}
{{- if .tls.enabled }}
  - path: /etc/kubernetes/webhooks/ca.pem
    content: {{ .tls.cert | toJson }}
{{- end }}
  - path: /etc/kubernetes/webhooks/azimuth_authorization_webhook_config.yaml
    permissions: "0644"
    owner: root:root
    content: {{ include "openstack-cluster.webhookKubeconfig" (dict "server" .server "ca" (.tls.enabled | ternary "/etc/kubernetes/webhooks/ca.pem" "")) | printf "%s\n" | toJson }}
  - path: /etc/kubernetes/webhooks/authorization_config.yaml
    content: {{ include "openstack-cluster.azimuthAuthorizationConfig" . | printf "%s\n" | toJson }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The API server's authorizers: the Azimuth webhook, for requests it filters, then the given ones. */}}
{{- define "openstack-cluster.azimuthAuthorizationConfig" -}}
---
apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
  - type: Webhook
    name: webhook
    webhook:
      timeout: {{ .timeout }}
      subjectAccessReviewVersion: {{ .webhookVersion }}
      matchConditionSubjectAccessReviewVersion: {{ .webhookVersion }}
      failurePolicy: {{ .failurePolicy }}
      connectionInfo:
        type: KubeConfigFile
        kubeConfigFile: /etc/kubernetes/webhooks/azimuth_authorization_webhook_config.yaml
      matchConditions:
        - expression: has(request.resourceAttributes) && (!has(request.resourceAttributes.namespace) || request.resourceAttributes.namespace == "" || request.resourceAttributes.namespace in [{{ range $i, $ns := .filteredNamespaces }}{{ if $i }},{{ end }}{{ quote $ns }}{{ end }}])
{{- range .extraPreFilters }}
        - expression: {{ . }}
{{- end }}
{{- range .additionalAuthorizers }}
  - type: {{ .type }}
    name: {{ .name }}
{{- end }}
{{- end -}}

{{/* A kube-apiserver patch that mounts /etc/kubernetes/webhooks. */}}
{{- define "openstack-cluster.kubeadm.webhookMountFile" }}
  - path: /etc/kubernetes/patches/kube-apiserver0+strategic.yaml
    permissions: "0644"
    owner: root:root
    content: |
      spec:
        containers:
        -  name: kube-apiserver
           volumeMounts:
           - mountPath: /etc/kubernetes/webhooks
             name: kube-webhooks
             readOnly: true
        volumes:
        - hostPath:
            path: /etc/kubernetes/webhooks
            type: DirectoryOrCreate
          name: kube-webhooks
{{- end -}}

{{/* (dict "server" URL ["ca" path]) -> a kubeconfig for a webhook */}}
{{- define "openstack-cluster.webhookKubeconfig" -}}
---
apiVersion: v1
kind: Config
preferences: {}
clusters:
  - cluster:
{{- if .ca }}
      certificate-authority: {{ .ca }}
{{- else }}
      insecure-skip-tls-verify: true
{{- end }}
      server: {{ .server }}
    name: webhook
users:
  - name: webhook
contexts:
  - context:
      cluster: webhook
      user: webhook
    name: webhook
current-context: webhook
{{- end -}}
