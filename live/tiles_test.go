package live

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"
)

// The ledger's tiles are served from the chain's folder over real HTTP:
// the checkpoint briefly cacheable, tiles and bundles immutable, bundles
// gzipped on request, and nothing else of the folder.
func TestTilesServed(t *testing.T) {
	t.Parallel()
	l := testChain(t)
	base := serveLoopback(t, newTestServer(t, Options{Chain: l.Store, TilesDir: l.Chain.TilesDir()}))
	get := func(method, path, encoding string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	for _, c := range []struct {
		path, ctype, cache string
		size               int
	}{
		{"/ledger/checkpoint", "text/plain; charset=utf-8", "public, max-age=5", -1},
		{"/ledger/tile/0/000.p/224", "application/octet-stream", "public, max-age=31536000, immutable", 224 * 32},
		{"/ledger/tile/entries/000.p/224", "application/octet-stream", "public, max-age=31536000, immutable", -1},
	} {
		resp, body := get(http.MethodGet, c.path, "")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.ctype || resp.Header.Get("Cache-Control") != c.cache ||
			(c.size >= 0 && len(body) != c.size) || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d %v, %d bytes", c.path, resp.StatusCode, resp.Header, len(body))
		}
		head, _ := get(http.MethodHead, c.path, "")
		if head.StatusCode != 200 || head.ContentLength != int64(len(body)) {
			t.Errorf("HEAD %s: %d, length %d", c.path, head.StatusCode, head.ContentLength)
		}
	}
	_, plain := get(http.MethodGet, "/ledger/tile/entries/000.p/224", "")
	resp, gz := get(http.MethodGet, "/ledger/tile/entries/000.p/224", "gzip")
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip: %v %v", err, resp.Header)
	}
	if unzipped, _ := io.ReadAll(zr); !bytes.Equal(unzipped, plain) || len(gz) >= len(plain) {
		t.Fatal("the gzipped bundle is not the bundle, or not smaller")
	}
	for _, path := range []string{"/ledger/.size", "/ledger/tile/0/000.p/224.tmp", "/ledger/tile/0/001", "/ledger/tile/0/0", "/ledger/tile/64/000", "/ledger/"} {
		if resp, _ := get(http.MethodGet, path, ""); resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	if resp, _ := get(http.MethodOptions, "/ledger/checkpoint", ""); resp.StatusCode != 204 || resp.Header.Get("Allow") == "" {
		t.Errorf("OPTIONS: %d %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if resp, _ := get(http.MethodPost, "/ledger/checkpoint", ""); resp.StatusCode != 405 {
		t.Errorf("POST: %d", resp.StatusCode)
	}
}
