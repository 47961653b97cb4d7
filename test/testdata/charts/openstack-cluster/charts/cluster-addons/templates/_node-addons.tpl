{{/* NFD runs everywhere and labels nodes by the PCI classes of interest (NICs, GPUs, accelerators). */}}
{{- define "cluster-addons.nodeFeatureDiscovery.defaults" -}}
master:
  extraLabelNs:
    - nvidia.com
worker:
  # Allow the NFD pods to be scheduled on all pods
  tolerations:
    - effect: "NoSchedule"
      operator: "Exists"
{{- if .Values.amdGPUOperator.enabled }}
    - key: "amd-dcm"
      operator: "Equal"
      value: "up"
      effect: "NoExecute"
{{- end }}
  # We want to be able to identify nodes with high-performance hardware
  # So the whitelisted device classes are:
  #   02   - Network Controllers (e.g. Ethernet, Infiniband)
  #   03   - Display Controllers (e.g. GPUs)
  #   0b40 - Co-processors
  #   12   - Processing Accelerators (e.g. specialised AI inference chips)
  config:
    sources:
      pci:
        deviceClassWhitelist:
          - "02"
          - "03"
          - "0b40"
          - "12"
        deviceLabelFields:
          - vendor
{{ end -}}

{{/* Node problem detector exports metrics only when there is a Prometheus to scrape them. */}}
{{- define "cluster-addons.nodeProblemDetector.defaults" -}}
{{- if .Values.monitoring.enabled -}}
metrics:
  enabled: true
  prometheusRule:
    enabled: true
    defaultRules:
      create: true
  serviceMonitor:
    enabled: true
{{- else -}}
metrics:
  enabled: false
{{- end }}
{{ end -}}

{{/* AMD's operator uses the NFD addon and the nodes' in-box drivers; its metrics exporter is scraped when monitoring is on. */}}
{{- define "cluster-addons.amdGPUOperator.defaults" -}}
# Use NFD addon instead
node-feature-discovery:
  enabled: false
# Unnescessary as using in-box drivers
kmm:
  enabled: false
  watch: false
deviceConfig:
  spec:
    metricsExporter:
      prometheus:
        serviceMonitor:
          enable: {{ .Values.monitoring.enabled }}
{{ end -}}
