package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// objectSet is what was read: the objects, the file each came from (to point
// at it when the object is invalid), and the documents that could not be
// decoded.
type objectSet struct {
	objs     []*unstructured.Unstructured
	source   map[string]string // objectKey -> file, relative to the directory
	problems []error
}

func objectKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// readObjectDir reads every object in the *.yaml, *.yml and *.json files under
// dir (recursively, in path order, skipping dot files): single objects,
// multi-document YAML, and Lists as `kubectl get -o yaml` writes them.
// Documents that cannot be decoded are problems naming the file (relative to
// dir) and the document; the error is for a directory that cannot be read.
func readObjectDir(dir string) (objectSet, error) {
	set := objectSet{source: map[string]string{}}
	info, err := os.Stat(dir)
	if err != nil {
		return set, fmt.Errorf("--from-dir: %w", err)
	}
	if !info.IsDir() {
		return set, fmt.Errorf("--from-dir: %s is not a directory", dir)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && path != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		got, err := readObjectFile(path)
		if err != nil {
			set.problems = append(set.problems, fmt.Errorf("%s: %w", rel, err))
		}
		for _, o := range got {
			key := objectKey(o.GetKind(), o.GetNamespace(), o.GetName())
			if _, seen := set.source[key]; !seen {
				set.source[key] = rel
			}
		}
		set.objs = append(set.objs, got...)
		return nil
	})
	if err != nil {
		return set, fmt.Errorf("--from-dir: %w", err)
	}
	return set, nil
}

// readObjectFile decodes one file's documents.
func readObjectFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var objs []*unstructured.Unstructured
	var errs []error
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return objs, fmt.Errorf("document %d: %w", n, err)
		}
		got, err := decodeDocument(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", n, err))
			continue
		}
		objs = append(objs, got...)
	}
	return objs, errors.Join(errs...)
}

// decodeDocument turns one YAML or JSON document into objects; a List (kind
// List, or any *List with items) yields its items. Numbers stay integers, as
// they do when read from the API.
func decodeDocument(doc []byte) ([]*unstructured.Unstructured, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	js = bytes.TrimSpace(js)
	if bytes.Equal(js, []byte("null")) {
		return nil, nil
	}
	var head struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	if s, ok := head.Kind.(string); !ok || s == "" {
		return nil, errors.New("kind: missing, expected the object's kind (as kubectl get -o yaml writes it)")
	}
	if s, ok := head.APIVersion.(string); !ok || s == "" {
		return nil, errors.New("apiVersion: missing, expected e.g. cluster.x-k8s.io/v1beta2")
	}
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
	if err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return []*unstructured.Unstructured{o}, nil
	case *unstructured.UnstructuredList:
		out := make([]*unstructured.Unstructured, 0, len(o.Items))
		for i := range o.Items {
			if o.Items[i].GetKind() == "" {
				return nil, fmt.Errorf("items[%d]: kind: missing", i)
			}
			out = append(out, &o.Items[i])
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected object %T", obj)
}
