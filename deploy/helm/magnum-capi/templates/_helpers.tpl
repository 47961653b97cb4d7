{{- define "magnum-capi.labels" -}}
app.kubernetes.io/name: magnum-capi
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "magnum-capi.selector" -}}
app.kubernetes.io/name: magnum-capi
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The sidecar's configuration: the values' config over what the chart sets. */}}
{{- define "magnum-capi.config" -}}
{{- $c := deepCopy .Values.config -}}
{{- if .Values.deployment.enabled -}}
{{- if not .Values.tls.secretName -}}{{ fail "deployment.enabled needs tls.secretName: a TCP listener requires mutual TLS" }}{{- end -}}
{{- $_ := set $c "listen" (get $c "listen" | default (printf "0.0.0.0:%v" .Values.deployment.port)) -}}
{{- $_ := set $c "tls" (merge (get $c "tls" | default dict) (dict "certFile" "/etc/magnum-capi/tls/tls.crt" "keyFile" "/etc/magnum-capi/tls/tls.key" "clientCAFile" "/etc/magnum-capi/tls/ca.crt")) -}}
{{- else -}}
{{- $_ := set $c "listen" (get $c "listen" | default "unix:///run/magnum-capi/magnum-capi.sock") -}}
{{- end -}}
{{- $_ := set $c "metricsAddress" (get $c "metricsAddress" | default (printf "0.0.0.0:%v" .Values.metrics.port)) -}}
{{- if not (hasKey $c "managementClusters") -}}
{{- $kubeconfig := "/etc/magnum-capi/kubeconfig/kubeconfig" -}}
{{- if .Values.managementCluster.inCluster }}{{ $kubeconfig = "/etc/magnum-capi/config/in-cluster-kubeconfig" }}{{ end -}}
{{- $_ := set $c "managementClusters" (list (dict "name" .Values.managementCluster.name "kubeconfig" $kubeconfig)) -}}
{{- end -}}
{{- if and .Values.cloudsSecret (not (dig "openstack" "cloudsFile" "" $c)) -}}
{{- $_ := set $c "openstack" (merge (get $c "openstack" | default dict) (dict "cloudsFile" "/etc/magnum-capi/clouds/clouds.yaml")) -}}
{{- end -}}
{{- toYaml $c -}}
{{- end }}

{{/* The sidecar's container: the same in its own Deployment and beside magnum-conductor. */}}
{{- define "magnum-capi.container" -}}
name: magnum-capi
image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
imagePullPolicy: {{ .Values.image.pullPolicy }}
command: [/usr/local/bin/magnum-capi]
args: [serve, --config, /etc/magnum-capi/config/magnum-capi.yaml]
env:
  - name: HOME
    value: /var/cache/magnum-capi
securityContext:
  runAsUser: {{ .Values.runAsUser }}
  runAsGroup: {{ .Values.runAsGroup }}
  runAsNonRoot: true
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
ports:
  - name: metrics
    containerPort: {{ .Values.metrics.port }}
{{- if .Values.deployment.enabled }}
  - name: grpc
    containerPort: {{ .Values.deployment.port }}
{{- end }}
startupProbe:
  httpGet: {path: /healthz, port: metrics}
  periodSeconds: 5
  failureThreshold: 60
readinessProbe:
  httpGet: {path: /healthz, port: metrics}
  periodSeconds: 10
livenessProbe:
  tcpSocket: {port: metrics}
  periodSeconds: 30
resources: {{- toYaml .Values.resources | nindent 2 }}
volumeMounts:
  - {name: magnum-capi-config, mountPath: /etc/magnum-capi/config, readOnly: true}
{{- if not .Values.managementCluster.inCluster }}
  - {name: magnum-capi-kubeconfig, mountPath: /etc/magnum-capi/kubeconfig, readOnly: true}
{{- end }}
{{- if .Values.cloudsSecret }}
  - {name: magnum-capi-clouds, mountPath: /etc/magnum-capi/clouds, readOnly: true}
{{- end }}
{{- if .Values.deployment.enabled }}
  - {name: magnum-capi-tls, mountPath: /etc/magnum-capi/tls, readOnly: true}
{{- end }}
  - {name: magnum-capi-run, mountPath: /run/magnum-capi}
  - {name: magnum-capi-cache, mountPath: /var/cache/magnum-capi}
{{- end }}

{{/* The pod volumes the container mounts; magnum-capi-run is the socket's emptyDir, which magnum-conductor mounts too. */}}
{{- define "magnum-capi.volumes" -}}
- name: magnum-capi-config
  configMap: {name: {{ .Release.Name }}-config}
{{- if not .Values.managementCluster.inCluster }}
- name: magnum-capi-kubeconfig
  secret: {secretName: {{ .Values.managementCluster.kubeconfigSecret }}, items: [{key: {{ .Values.managementCluster.kubeconfigKey }}, path: kubeconfig}]}
{{- end }}
{{- if .Values.cloudsSecret }}
- name: magnum-capi-clouds
  secret: {secretName: {{ .Values.cloudsSecret }}}
{{- end }}
{{- if .Values.deployment.enabled }}
- name: magnum-capi-tls
  secret: {secretName: {{ .Values.tls.secretName }}}
{{- end }}
- name: magnum-capi-run
  emptyDir: {}
- name: magnum-capi-cache
  emptyDir: {}
{{- end }}
