//go:build tools

// Package test holds the test bed and end-to-end tests. This file pins the
// product's dependencies while the packages that use them are being written;
// `go mod tidy` honours build-tagged files.
package test

import (
	_ "github.com/gophercloud/gophercloud/v2"
	_ "github.com/spf13/viper"
	_ "google.golang.org/grpc"
	_ "helm.sh/helm/v3/pkg/action"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/cluster-api/version"
	_ "sigs.k8s.io/yaml"
)
