package release

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	helmkube "helm.sh/helm/v3/pkg/kube"
	"k8s.io/client-go/rest"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// Before it writes anything, Helm's install reads every object of the
// release to refuse one that exists and belongs to someone else (its
// conflict check, existingResourceConflict in action.Install). It reads
// them one after another, in code no kube client method reaches: on a busy
// API server each read is a round trip of 10–80 ms, and the openstack-cluster
// chart renders 35 objects — a second of a create (docs/benchmarks.md,
// "Reading ahead"). A read ahead sends those reads all at once as soon as
// the objects are built and answers Helm's reads, in whatever order it asks,
// with what the API server said. Helm still decides, with its own code and
// on the API server's own answers; they are only asked for earlier.
//
// What keeps the answers honest: each is given once, to a read of the same
// URL through the same object's client, and only until the action first
// writes through any of these clients; a read after that goes to the API
// server. Helm's check reads everything before the install writes.

// readAheadTimeout bounds one read sent ahead; a read still waiting on it
// when it gives up goes to the API server itself.
const readAheadTimeout = 30 * time.Second

// readAhead holds one action's reads sent ahead, by URL.
type readAhead struct {
	mu      sync.Mutex
	answers map[string]*aheadAnswer
	// wrote: the action has written through one of the objects' clients;
	// from then on every read goes to the API server.
	wrote bool
}

// aheadAnswer is one read sent ahead; done closes when it has its answer,
// and resp is nil when it has none (the request failed below HTTP).
type aheadAnswer struct {
	done chan struct{}
	resp *recordedResponse
}

// recordedResponse is an HTTP response kept to be given again.
type recordedResponse struct {
	status, proto      string
	code, major, minor int
	header             http.Header
	body               []byte
}

// readingAheadKey marks a request's context as a read sent ahead.
type readingAheadKey struct{}

// readObjectsAhead sends a GET of every object in list at once, through
// the object's own client, and has that client answer Helm's GET of it
// from there. It returns at once; a Helm read waits for its answer.
// Objects whose client is not a REST client (test doubles) are left alone.
func readObjectsAhead(list helmkube.ResourceList) {
	a := &readAhead{answers: map[string]*aheadAnswer{}}
	wrapped := map[*http.Client]bool{}
	var reads []func()
	for _, info := range list {
		rc, ok := info.Client.(*rest.RESTClient)
		// http.DefaultClient is everyone's: its transport is not ours to wrap.
		if !ok || rc.Client == nil || rc.Client == http.DefaultClient || info.Mapping == nil {
			continue
		}
		get := func() *rest.Request {
			return rc.Get().NamespaceIfScoped(info.Namespace, info.Namespaced()).Resource(info.Mapping.Resource.Resource).Name(info.Name)
		}
		url := get().URL().String()
		if _, twice := a.answers[url]; twice {
			continue
		}
		ans := &aheadAnswer{done: make(chan struct{})}
		a.answers[url] = ans
		if !wrapped[rc.Client] {
			next := rc.Client.Transport
			if next == nil {
				next = http.DefaultTransport
			}
			rc.Client.Transport = aheadTransport{next: next, ahead: a}
			wrapped[rc.Client] = true
		}
		reads = append(reads, func() {
			defer close(ans.done)
			ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), readingAheadKey{}, ans), readAheadTimeout)
			defer cancel()
			// The answer is what the transport records; the decoded
			// result is not needed here.
			_ = get().Do(ctx)
		})
	}
	slots := make(chan struct{}, maxConcurrentWrites)
	for _, read := range reads {
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			// A read ahead that panics leaves its answer out: Helm's own
			// GET of the object then goes to the API server.
			_ = panics.Run(context.Background(), nil, "release/readAhead", func() error { read(); return nil })
		}()
	}
}

// take hands out the answer to a GET of url, once, waiting for it if it
// is still on its way; nil when there is none to give.
func (a *readAhead) take(url string) *recordedResponse {
	a.mu.Lock()
	ans, ok := a.answers[url]
	delete(a.answers, url)
	wrote := a.wrote
	a.mu.Unlock()
	if !ok || wrote {
		return nil
	}
	<-ans.done // bounded by readAheadTimeout
	return ans.resp
}

// stop: the action writes; no answer sent ahead is given any more.
func (a *readAhead) stop() {
	a.mu.Lock()
	a.wrote, a.answers = true, nil
	a.mu.Unlock()
}

// aheadTransport is the transport of an object's client during a read
// ahead: it records the reads sent ahead and answers the action's reads
// from them.
type aheadTransport struct {
	next  http.RoundTripper
	ahead *readAhead
}

func (t aheadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if ans, ok := req.Context().Value(readingAheadKey{}).(*aheadAnswer); ok {
		return t.record(req, ans)
	}
	if req.Method != http.MethodGet {
		t.ahead.stop()
		return t.next.RoundTrip(req)
	}
	if rec := t.ahead.take(req.URL.String()); rec != nil {
		return rec.response(req), nil
	}
	return t.next.RoundTrip(req)
}

// record sends a read ahead and keeps its response for ans; the client
// that sent it may retry, and then the last response is the answer.
func (t aheadTransport) record(req *http.Request, ans *aheadAnswer) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	var rec *recordedResponse
	if err == nil {
		var body []byte
		body, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err == nil {
			rec = &recordedResponse{status: resp.Status, proto: resp.Proto, code: resp.StatusCode,
				major: resp.ProtoMajor, minor: resp.ProtoMinor, header: resp.Header, body: body}
		}
	}
	t.ahead.mu.Lock()
	ans.resp = rec
	t.ahead.mu.Unlock()
	if rec == nil {
		return nil, err
	}
	return rec.response(req), nil
}

// response gives the recorded response again, as the answer to req.
func (r *recordedResponse) response(req *http.Request) *http.Response {
	return &http.Response{
		Status: r.status, StatusCode: r.code,
		Proto: r.proto, ProtoMajor: r.major, ProtoMinor: r.minor,
		Header:        r.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(r.body)),
		ContentLength: int64(len(r.body)),
		Request:       req,
	}
}
