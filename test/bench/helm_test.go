package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// release is the newest Helm release record of a release (Helm's storage
// Secret sh.helm.release.v1.<name>.v<revision>).
type release struct {
	status   string
	revision int
	manifest string
	// values is the values document the revision was installed with.
	values map[string]any
}

// latestRelease reads the newest release record of name in ns; ok is false
// when there is none.
func latestRelease(ctx context.Context, kube client.Client, ns, name string) (release, bool, error) {
	var secrets corev1.SecretList
	if err := kube.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": name}); err != nil {
		return release{}, false, err
	}
	var newest *corev1.Secret
	best := -1
	for i := range secrets.Items {
		v, err := strconv.Atoi(secrets.Items[i].Labels["version"])
		if err != nil {
			return release{}, false, fmt.Errorf("helm record %s: label version %q is not a number", secrets.Items[i].Name, secrets.Items[i].Labels["version"])
		}
		if v > best {
			best, newest = v, &secrets.Items[i]
		}
	}
	if newest == nil {
		return release{}, false, nil
	}
	manifest, values, err := decodeRelease(newest.Data["release"])
	if err != nil {
		return release{}, false, fmt.Errorf("helm record %s: %w", newest.Name, err)
	}
	return release{status: newest.Labels["status"], revision: best, manifest: manifest, values: values}, true, nil
}

// decodeRelease reads the rendered manifest and the values out of Helm's
// encoding of a release: base64 of gzipped JSON.
func decodeRelease(data []byte) (string, map[string]any, error) {
	raw, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		return "", nil, fmt.Errorf("release payload is not base64: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return "", nil, fmt.Errorf("release payload is not gzip: %w", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return "", nil, err
	}
	var rel struct {
		Manifest string         `json:"manifest"`
		Config   map[string]any `json:"config"`
	}
	if err := json.Unmarshal(plain, &rel); err != nil {
		return "", nil, fmt.Errorf("release payload is not JSON: %w", err)
	}
	return rel.Manifest, rel.Config, nil
}
