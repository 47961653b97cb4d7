package server

import "net/http"

// RunOption changes how Run wires the sidecar; only tests use them.
type RunOption func(*runOptions)

type runOptions struct {
	wrapKube func(http.RoundTripper) http.RoundTripper
}

// WithKubeTransport wraps the transport of every management-cluster
// connection (the watch caches' included), e.g. to count the API requests
// status polls make.
func WithKubeTransport(wrap func(http.RoundTripper) http.RoundTripper) RunOption {
	return func(o *runOptions) { o.wrapKube = wrap }
}
