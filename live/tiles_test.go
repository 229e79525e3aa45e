package live

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
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

// The log is served from memory and follows its folder as the chain
// grows: a new checkpoint at once, the partial tiles a full tile replaces
// gone, the full tile and the next partial served, and a file rewritten in
// place (a folder rebuilt) never answered from what was kept of it.
func TestTilesFollowTheGrowingLog(t *testing.T) {
	t.Parallel()
	l := testChain(t)
	srv := newTestServer(t, Options{Chain: l.Store, TilesDir: l.Chain.TilesDir()})
	base := serveLoopback(t, srv)
	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	sizeOf := func(checkpoint []byte) string { return strings.SplitN(string(checkpoint), "\n", 3)[1] }
	_, cp := get("/ledger/checkpoint")
	if status, tile := get("/ledger/tile/0/000.p/224"); status != 200 || len(tile) != 224*32 || sizeOf(cp) != "224" {
		t.Fatalf("before: %d, %d bytes, checkpoint of %s rows", status, len(tile), sizeOf(cp))
	}
	if srv.tiles.files["tile/0/000.p/224"] == nil || srv.tiles.files["checkpoint"] == nil {
		t.Fatalf("the tile and the checkpoint are not kept in memory: %v", srv.tiles.files)
	}
	for i := range 32 { // to 256 rows: the first full tile
		if _, err := l.Append(context.Background(), ledger.Entry{Kind: "audit", Payload: fmt.Appendf(nil, `{"i":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
		if _, cp = get("/ledger/checkpoint"); sizeOf(cp) != strconv.Itoa(225+i) {
			t.Fatalf("after %d appends the checkpoint is of %s rows", i+1, sizeOf(cp))
		}
	}
	if status, _ := get("/ledger/tile/0/000.p/224"); status != 404 {
		t.Errorf("the partial tile its full tile replaced: %d, want 404", status)
	}
	status, full := get("/ledger/tile/0/000")
	if status != 200 || len(full) != 256*32 {
		t.Fatalf("the full tile: %d, %d bytes", status, len(full))
	}
	if _, err := l.Append(context.Background(), ledger.Entry{Kind: "audit", Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if status, tile := get("/ledger/tile/0/001.p/1"); status != 200 || len(tile) != 32 {
		t.Errorf("the next partial tile: %d, %d bytes", status, len(tile))
	}
	// The folder rewritten in place, as a rebuild for another chain would.
	path := filepath.Join(l.Chain.TilesDir(), "tile", "0", "000")
	changed := bytes.Repeat([]byte{0xaa}, len(full))
	if err := os.WriteFile(path, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour) // a new modification time, even on a coarse clock
	os.Chtimes(path, future, future)
	if _, got := get("/ledger/tile/0/000"); !bytes.Equal(got, changed) {
		t.Error("a rewritten tile was answered from memory")
	}
}

// The cache holds at most its bound: over it, it empties and fills again.
func TestTileCacheBounded(t *testing.T) {
	dir := t.TempDir()
	c := newTileCache(dir)
	c.max, c.maxFile = 64<<10, 8<<10
	tile := bytes.Repeat([]byte{1}, c.maxFile)
	for i := range 2 * c.max / c.maxFile {
		name := fmt.Sprintf("tile/0/%03d", i)
		os.MkdirAll(filepath.Join(dir, "tile", "0"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), tile, 0o644); err != nil {
			t.Fatal(err)
		}
		if f, err := c.get(name); err != nil || !bytes.Equal(f.data, tile) {
			t.Fatalf("%s: %v", name, err)
		}
		held := 0
		for _, f := range c.files {
			held += f.size()
		}
		if c.bytes != held || c.bytes > c.max || c.files[name] == nil {
			t.Fatalf("after %s: %d bytes counted, %d held, bound %d", name, c.bytes, held, c.max)
		}
	}
	big := filepath.Join(dir, "tile", "entries", "000")
	os.MkdirAll(filepath.Dir(big), 0o755)
	os.WriteFile(big, bytes.Repeat([]byte{2}, c.maxFile+1), 0o644)
	if f, err := c.get("tile/entries/000"); err != nil || len(f.data) != c.maxFile+1 || c.files["tile/entries/000"] != nil {
		t.Errorf("a file over the size kept: %v, kept %v", err, c.files["tile/entries/000"] != nil)
	}
}
