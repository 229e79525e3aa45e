package live

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/valyala/fasthttp"
)

// A fixed header's name must already be what fasthttp would normalise it
// to, since setting it skips that step.
func TestFixedHeadersAreCanonical(t *testing.T) {
	for _, h := range fixedHeaders {
		if want := fasthttp.AppendNormalizedHeaderKey(nil, string(h.name)); string(h.name) != string(want) {
			t.Errorf("header name %q, want %q", h.name, want)
		}
		var r fasthttp.ResponseHeader
		r.SetCanonical(h.name, h.value)
		if got := r.Peek(string(h.name)); string(got) != string(h.value) {
			t.Errorf("%s: %q, want %q", h.name, got, h.value)
		}
	}
}

// Every header a page and an API response carry, with its exact value.
func TestResponseHeaders(t *testing.T) {
	srv := newTestServer(t, Options{Chain: testChain(t)})
	common := map[string]string{
		"X-Content-Type-Options": "nosniff", "Referrer-Policy": "strict-origin-when-cross-origin", "X-Frame-Options": "DENY",
	}
	tests := []struct {
		path, encoding string
		want           map[string]string
	}{
		{"/gate.html", "", map[string]string{"Vary": "Accept, Accept-Encoding", "Cache-Control": "public, max-age=0, must-revalidate",
			"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": htmlCSP, "Content-Encoding": ""}},
		{"/assets/style.abc.css", "", map[string]string{"Cache-Control": "public, max-age=31536000, immutable",
			"Content-Type": "text/css; charset=utf-8", "Content-Security-Policy": ""}},
		{"/big.txt", "gzip", map[string]string{"Content-Encoding": "gzip", "Content-Type": "text/plain; charset=utf-8"}},
		{"/api/ledger/verify", "", map[string]string{"Cache-Control": "no-store", "Content-Type": "application/json", "Vary": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.encoding != "" {
				req.Header.Set("Accept-Encoding", tc.encoding)
			}
			resp, _ := do(t, srv.app, req)
			for name, want := range common {
				if got := resp.Header.Values(name); len(got) != 1 || got[0] != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
			for name, want := range tc.want {
				if got := resp.Header.Get(name); got != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
		})
	}
}
