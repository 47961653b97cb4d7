{{/*
Merging kubeadm config fragments.

The chart builds each kubeadm config from fragments (containerd mirrors,
trusted CAs, etcd, admission, the user's own spec...). Fragments merge like
this, as in the real chart, so user files and commands are added to the
chart's own instead of replacing them:
  - map + map: merged key by key;
  - list + list: concatenated, left first;
  - anything else: the right value, unless it is empty (then the left one).

Templates can only return text, so results travel as YAML {value: ...}.
*/}}

{{/* (list left right) -> YAML of {value: merged} */}}
{{- define "openstack-cluster.mergeConcat" -}}
{{- $left := index . 0 -}}
{{- $right := index . 1 -}}
{{- $merged := $right | default $left -}}
{{- if and (kindIs "map" $left) (kindIs "map" $right) -}}
{{- $merged = deepCopy $left -}}
{{- range $key, $value := $right -}}
{{- if hasKey $merged $key -}}
{{- $_ := set $merged $key (include "openstack-cluster.mergeConcat" (list (index $merged $key) $value) | fromYaml).value -}}
{{- else -}}
{{- $_ := set $merged $key $value -}}
{{- end -}}
{{- end -}}
{{- else if and (kindIs "slice" $left) (kindIs "slice" $right) -}}
{{- $merged = concat $left $right -}}
{{- end -}}
{{- dict "value" $merged | toYaml -}}
{{- end -}}

{{/* (list map1 map2 ...) -> YAML of all of them merged in order */}}
{{- define "openstack-cluster.mergeConcatAll" -}}
{{- $merged := dict -}}
{{- range $fragment := . -}}
{{- $merged = (include "openstack-cluster.mergeConcat" (list $merged ($fragment | default dict)) | fromYaml).value -}}
{{- end -}}
{{- toYaml $merged -}}
{{- end -}}
