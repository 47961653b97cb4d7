package server

import "net/http"

// Option changes how New assembles the sidecar; only tests use them.
type Option func(*options)

type options struct {
	wrapKube func(http.RoundTripper) http.RoundTripper
}

// WithKubeTransport wraps the transport of every management-cluster
// connection (the watch caches' included), e.g. to count the API requests
// status polls make.
func WithKubeTransport(wrap func(http.RoundTripper) http.RoundTripper) Option {
	return func(o *options) { o.wrapKube = wrap }
}
