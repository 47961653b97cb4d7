package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// etcdStore writes a clone's objects where kube-apiserver keeps them:
// straight into the test bed's etcd, through etcd's JSON gateway
// (POST /v3/kv/put), one object at a time, as kube-apiserver writes them.
//
// A shortcut no cloud takes — no admission, validation, defaulting or
// conversion — and taken only to load copies: through the API server, 2,000
// clusters (46,000 objects, an object create and a status update each) took
// 9 m 56 s on two cores, so 10,000 would take most of an hour. The objects
// are copies of what the API server stored for a real cluster, at the
// versions it stores them, so they are what it would have stored;
// kube-apiserver's watch cache follows etcd, so the sidecar's informers see
// them as they see objects created through it (a list, then watch events).
type etcdStore struct {
	url  string
	http *http.Client
	// prefixes are each kind's key prefix: "/registry/<group>/<resource>"
	// ("/registry/<resource>" for the core group), kube-apiserver's layout
	// with its default --etcd-prefix.
	prefixes map[schema.GroupVersionKind]string
}

// newEtcdStore maps the template's kinds to their keys through the API
// server's own REST mapping.
func newEtcdStore(url string, kc client.Client, t *template) (*etcdStore, error) {
	s := &etcdStore{url: strings.TrimSuffix(url, "/"), http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: loadWorkers}}, prefixes: map[schema.GroupVersionKind]string{}}
	for _, o := range t.objects {
		gvk := o.GroupVersionKind()
		if _, ok := s.prefixes[gvk]; ok {
			continue
		}
		m, err := kc.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("the resource of %s: %w", gvk, err)
		}
		s.prefixes[gvk] = etcdPrefix(m.Resource)
	}
	return s, nil
}

// etcdPrefix is where kube-apiserver keeps a resource's objects.
func etcdPrefix(r schema.GroupVersionResource) string {
	if r.Group == "" {
		return "/registry/" + r.Resource
	}
	return "/registry/" + r.Group + "/" + r.Resource
}

type etcdPut struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// write stores objs, each with a new uid and creation time, one put
// each: kube-apiserver writes one object per etcd revision, and watchers
// depend on it — a reflector resuming its watch from an object's
// resourceVersion skips every other object written at that revision (a
// transaction of several objects of one kind lost some of them here).
func (s *etcdStore) write(ctx context.Context, objs []*unstructured.Unstructured) error {
	now := time.Now().UTC().Format(time.RFC3339)
	for _, u := range objs {
		prefix, ok := s.prefixes[u.GroupVersionKind()]
		if !ok {
			return fmt.Errorf("no etcd key for %s", u.GroupVersionKind())
		}
		if err := unstructured.SetNestedField(u.Object, uuid.NewString(), "metadata", "uid"); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(u.Object, now, "metadata", "creationTimestamp"); err != nil {
			return err
		}
		raw, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		key := prefix + "/" + u.GetNamespace() + "/" + u.GetName()
		if err := s.put(ctx, key, raw); err != nil {
			return fmt.Errorf("writing %s %s into etcd: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// put writes one key.
func (s *etcdStore) put(ctx context.Context, key string, value []byte) error {
	body, err := json.Marshal(etcdPut{
		Key:   base64.StdEncoding.EncodeToString([]byte(key)),
		Value: base64.StdEncoding.EncodeToString(value),
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/v3/kv/put", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, answer)
	}
	return nil
}
