package live

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/chain/chaintest"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/store"
	"github.com/proofsite/proofsite/live/memory/dual"
	"github.com/valyala/fasthttp"
)

// testSite is a small organisation for the tests.
func testSite() *Site {
	return &Site{
		Charter: charter.Charter{
			SiteInfo:     charter.SiteInfo{Title: "Test Commons", BaseURL: "https://proof.test.example", APIURL: "https://api.test.example", License: "CC0-1.0"},
			Organisation: charter.Organisation{Name: "Test Commons", HumanAuthority: "Nodes advise; the Bridge decides."},
			Nodes: []charter.Node{
				{ID: "s1", Designation: "S1_PLEX", Name: "Plex", Kind: "ai", Town: "plex"},
				{ID: "s2", Designation: "S2_CASE", Name: "Case", Kind: "ai", Town: "case"},
				{ID: "s5", Designation: "S5_LOCUS", Name: "Ember", Kind: "ai", PublicRoute: "/api/ember"},
				{Designation: "S17_LUMEN", Name: "Lumen", Kind: "ai", PublicRoute: "/api/lumen"},
				{ID: "bridge", Designation: "BRIDGE", Name: "The Bridge", Kind: "human"},
			},
			Towns: []charter.Town{{ID: "plex", Node: "S1_PLEX", Name: "Town of Plex"}, {ID: "case", Node: "S2_CASE", Name: "Town of Case"}},
			Capabilities: []charter.Capability{{Key: "maturity", Value: "gate_public_launch"}, {Key: "bridge_auth", Value: "live_and_proven"},
				{Key: "enforcement_model", Value: "orchestrator_invoked_checkpoint_today"}},
			PublishRule:  charter.PublishRule{Key: "publish_rule", Action: "PUBLIC_CLAIM_CHANGE", Requires: "BRIDGE_AUTH", Text: "Claims need the Bridge."},
			Constitution: charter.Constitution{Version: "2.0"},
		},
		RuntimeArtifact: RuntimeArtifact{Raw: json.RawMessage(`{"version":"1.8","articles":[]}`), Version: "1.8", Articles: 42},
		Records:         map[string]json.RawMessage{"shares": json.RawMessage(`{"record":"shares","authorized_shares":100000000}`)},
	}
}

// testLedger is a real chain (ledger/chain over Badger) as the live edge
// sees it: the store's reads (Chain), durable appends (Appender) and the
// chain's signed checkpoints and export (Publisher).
type testLedger struct {
	*store.Store
	*chain.Chain
}

// Append seals e with the chain's keys and appends it, synced.
func (l testLedger) Append(ctx context.Context, e ledger.Entry) (ledger.Block, error) {
	return l.Chain.Append(ctx, e)
}

// Close closes the chain (and its store).
func (l testLedger) Close() error { return l.Chain.Close() }

// testChain seals the project's history with fresh keys into a real
// chain, walked once.
func testChain(t testing.TB) testLedger { return newTestLedger(t, "") }

// newTestLedger seals the project's history with fresh keys into a real
// chain whose data folder is dir (a temporary directory when empty),
// walked once.
func newTestLedger(t testing.TB, dir string) testLedger {
	t.Helper()
	c := chaintest.Walked(t, chain.Options{DataDir: dir, LogOrigin: "proof.test.example/ledger"})
	return testLedger{Store: c.Store(), Chain: c}
}

// testPublic writes a small built site.
func testPublic(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"index.html":           "<!doctype html><title>home</title>",
		"index.md":             "# Home\n",
		"gate.html":            "<!doctype html><title>gate</title>",
		"gate.md":              "# Gate\n",
		"404.html":             "<!doctype html><title>not found</title>",
		"404.md":               "# Not found\n",
		"llms.txt":             "# Test\n",
		"pages/index.html":     "<!doctype html><title>pages</title>",
		"assets/style.abc.css": "body{}",
		"big.txt":              strings.Repeat("all work and no play makes a dull page\n", 200),
		"_headers":             "/*\n",
		".gitkeep":             "",
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func newTestServer(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.PublicDir == "" {
		opts.PublicDir = testPublic(t)
	}
	if opts.Site == nil {
		opts.Site = testSite()
	}
	if p, ok := opts.Chain.(Publisher); ok && opts.Publisher == nil {
		opts.Publisher = p
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}

// do sends one request through the app, from remote address 192.0.2.1
// unless the request says otherwise.
func do(t testing.TB, app *fiber.App, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// openAPIErrors validates a document against the OpenAPI 3.1 schema.
func openAPIErrors(t *testing.T, data []byte) []string {
	t.Helper()
	doc, err := libopenapi.NewDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var out []string
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			out = append(out, fmt.Sprintf("%s: %s (line %d)", e.Message, e.Reason, e.SpecLine))
		}
		if len(out) == 0 {
			out = append(out, "invalid")
		}
	}
	return out
}

func TestOpenAPIDocumentsAreValid(t *testing.T) {
	broken := []byte(`{"openapi":"3.1.0","info":{"title":"no version"},"paths":{}}`) // info.version is required
	if len(openAPIErrors(t, broken)) == 0 {
		t.Fatal("the validator accepts a broken document")
	}
	proof, v1, err := Documents(*testSite())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"openapi.json": proof, "api/v1/openapi.json": v1} {
		t.Run(name, func(t *testing.T) {
			for _, e := range openAPIErrors(t, data) {
				t.Error(e)
			}
			var head struct {
				OpenAPI string `json:"openapi"`
				Info    struct{ Version string }
			}
			json.Unmarshal(data, &head)
			if head.OpenAPI != "3.1.0" {
				t.Errorf("openapi %q", head.OpenAPI)
			}
		})
	}
	var doc struct {
		Info  struct{ Version string }
		Board struct {
			Board            map[string]string `json:"board"`
			EnforcementModel string            `json:"enforcement_model"`
		} `json:"x-capability-control-plane"`
	}
	json.Unmarshal(proof, &doc)
	if doc.Info.Version != ProofAPIVersion || doc.Board.Board["bridge_auth"] != "live_and_proven" ||
		doc.Board.EnforcementModel != "orchestrator_invoked_checkpoint_today" {
		t.Errorf("proof description: version %q, control plane %+v", doc.Info.Version, doc.Board)
	}
}

// TestEveryRouteDocumented compares the routes the app serves with the
// paths both descriptions document.
func TestEveryRouteDocumented(t *testing.T) {
	evaluation, _ := testEvaluation(t)
	srv, _ := newAIServer(t, aiSetup{eval: evaluation})
	proof, v1, err := Documents(*srv.site)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, data := range [][]byte{proof, v1} {
		var doc struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		json.Unmarshal(data, &doc)
		for path, ops := range doc.Paths {
			for method := range ops {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	served := map[string]bool{}
	for _, r := range srv.app.GetRoutes(true) {
		if r.Method == http.MethodHead || strings.HasPrefix(r.Path, ReloadPrefix) || r.Path == "/" || r.Path == "/api" {
			continue // HEAD twins of GET, watch-only routes, middleware
		}
		served[r.Method+" "+regexp.MustCompile(`:(\w+)`).ReplaceAllString(r.Path, "{$1}")] = true
	}
	for route := range served {
		if !documented[route] {
			t.Errorf("served but not documented: %s", route)
		}
	}
	static := map[string]bool{}
	for _, sf := range staticSurfaces {
		static["GET "+sf.Path] = true
	}
	for route := range documented {
		if !served[route] && !static[route] {
			t.Errorf("documented but not served: %s", route)
		}
	}
	if len(served) < 25 {
		t.Errorf("only %d routes served", len(served))
	}
}

func TestClientIP(t *testing.T) {
	tests := []struct {
		desc    string
		trusted []string
		remote  string
		xff     string
		want    string
	}{
		{"no proxy configured: the header is ignored", nil, "192.0.2.1", "203.0.113.9", "192.0.2.1"},
		{"untrusted peer cannot choose its key", []string{"10.0.0.0/8"}, "192.0.2.1", "203.0.113.9", "192.0.2.1"},
		{"trusted proxy: the client it saw", []string{"10.0.0.1"}, "10.0.0.1", "203.0.113.9", "203.0.113.9"},
		{"right-most untrusted hop wins over a forged left part", []string{"10.0.0.0/8"}, "10.0.0.1", "198.51.100.7, 203.0.113.9, 10.0.0.2", "203.0.113.9"},
		{"garbage stops the walk", []string{"10.0.0.0/8"}, "10.0.0.1", "203.0.113.9, nonsense", "10.0.0.1"},
		{"only proxies: the peer", []string{"10.0.0.0/8"}, "10.0.0.1", "10.0.0.2", "10.0.0.1"},
		{"IPv6 client", []string{"10.0.0.1"}, "10.0.0.1", "2001:db8::1", "2001:db8::1"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			ips, err := newClientIPs(tc.trusted)
			if err != nil {
				t.Fatal(err)
			}
			var req fasthttp.Request
			if tc.xff != "" {
				req.Header.Set("X-Forwarded-For", tc.xff)
			}
			var fctx fasthttp.RequestCtx
			fctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(tc.remote), Port: 1234}, nil)
			app := fiber.New()
			c := app.AcquireCtx(&fctx)
			defer app.ReleaseCtx(c)
			if got := ips.of(c).String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := newClientIPs([]string{"not an address"}); err == nil {
		t.Error("a bad proxy address was accepted")
	}
}

func TestStaticSite(t *testing.T) {
	srv := newTestServer(t, Options{})
	get := func(path string, header ...string) (*http.Response, []byte) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		return do(t, srv.app, req)
	}
	tests := []struct {
		desc     string
		path     string
		header   []string
		status   int
		ctype    string
		contains string
	}{
		{"home", "/", nil, 200, "text/html; charset=utf-8", "home"},
		{"page", "/gate.html", nil, 200, "text/html; charset=utf-8", "gate"},
		{"markdown preferred", "/gate.html", []string{"Accept", "text/markdown, text/html;q=0.5"}, 200, "text/markdown; charset=utf-8", "# Gate"},
		{"markdown twin of the home page", "/", []string{"Accept", "text/markdown"}, 200, "text/markdown; charset=utf-8", "# Home"},
		{"html preferred", "/gate.html", []string{"Accept", "text/html, text/markdown;q=0.5"}, 200, "text/html; charset=utf-8", "gate"},
		{"folder index", "/pages/", nil, 200, "text/html; charset=utf-8", "pages"},
		{"text", "/llms.txt", nil, 200, "text/plain; charset=utf-8", "# Test"},
		{"page without .html", "/gate", nil, 200, "text/html; charset=utf-8", "gate"},
		{"page without .html, markdown preferred", "/gate", []string{"Accept", "text/markdown"}, 200, "text/markdown; charset=utf-8", "# Gate"},
		{"missing page", "/nope.html", nil, 404, "text/html; charset=utf-8", "not found"},
		{"missing page, markdown preferred", "/nope", []string{"Accept", "text/markdown"}, 404, "text/markdown; charset=utf-8", "# Not found"},
		{"host files are not served", "/_headers", nil, 404, "", ""},
		{"dot files are not served", "/.gitkeep", nil, 404, "", ""},
		{"no escape", "/../../etc/passwd", nil, 404, "", ""},
		{"unknown API path is a problem", "/api/nope", nil, 404, "application/problem+json", "urn:proofsite:problem:not-found"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			resp, body := get(tc.path, tc.header...)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype {
				t.Errorf("content type %q, want %q", resp.Header.Get("Content-Type"), tc.ctype)
			}
			if !bytes.Contains(body, []byte(tc.contains)) {
				t.Errorf("body %q does not contain %q", body, tc.contains)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("security headers missing")
			}
		})
	}

	t.Run("folder without slash redirects", func(t *testing.T) {
		resp, _ := get("/pages")
		if resp.StatusCode != 301 || resp.Header.Get("Location") != "/pages/" {
			t.Errorf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("etag revalidation", func(t *testing.T) {
		resp, _ := get("/gate.html")
		etag := resp.Header.Get("ETag")
		if etag == "" || resp.Header.Get("Cache-Control") != "public, max-age=0, must-revalidate" {
			t.Fatalf("etag %q, cache %q", etag, resp.Header.Get("Cache-Control"))
		}
		if resp, _ := get("/gate.html", "If-None-Match", etag); resp.StatusCode != 304 {
			t.Errorf("revalidation: %d", resp.StatusCode)
		}
		if resp, _ := get("/assets/style.abc.css"); !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("assets cache: %q", resp.Header.Get("Cache-Control"))
		}
	})
	t.Run("gzip", func(t *testing.T) {
		resp, body := get("/big.txt", "Accept-Encoding", "gzip")
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatal("not compressed")
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(zr)
		if !bytes.HasPrefix(plain, []byte("all work")) || len(body) >= len(plain) {
			t.Errorf("compressed %d -> %d", len(plain), len(body))
		}
	})
	t.Run("a replaced output folder is picked up", func(t *testing.T) {
		os.WriteFile(filepath.Join(srv.opts.PublicDir, "gate.html"), []byte("new gate"), 0o644)
		if err := srv.SiteChanged([]string{"gate.html"}); err != nil {
			t.Fatal(err)
		}
		if _, body := get("/gate.html"); string(body) != "new gate" {
			t.Errorf("got %q", body)
		}
	})
}

// serveLoopback runs srv on 127.0.0.1 and returns its base URL.
func serveLoopback(t testing.TB, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String()
}

func TestRateLimitAndBodyLimit(t *testing.T) {
	post := func(base, xff, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/handshake", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	limit := Limit{Max: 2, Window: time.Minute}

	t.Run("no trusted proxy: one budget per peer, whatever the header says", func(t *testing.T) {
		base := serveLoopback(t, newTestServer(t, Options{Chain: testChain(t), PostLimit: limit}))
		for i, xff := range []string{"", "198.51.100.1"} {
			if resp, _ := post(base, xff, `{"agent":"a"}`); resp.StatusCode != 200 {
				t.Fatalf("request %d: %d", i, resp.StatusCode)
			}
		}
		resp, body := post(base, "198.51.100.2", `{"agent":"a"}`)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Content-Type") != "application/problem+json" ||
			!bytes.Contains(body, []byte("urn:proofsite:problem:rate-limited")) {
			t.Errorf("third request: %d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if resp, _ := http.Get(base + "/api/v1/handshake"); resp.StatusCode != 200 {
			t.Errorf("GET routes are unlimited: %d", resp.StatusCode)
		}
	})
	t.Run("behind a trusted proxy: one budget per client", func(t *testing.T) {
		base := serveLoopback(t, newTestServer(t, Options{Chain: testChain(t), PostLimit: limit, TrustedProxies: []string{"127.0.0.1"}}))
		for i, client := range []string{"203.0.113.1", "203.0.113.1", "203.0.113.2", "203.0.113.2"} {
			if resp, _ := post(base, client, `{"agent":"a"}`); resp.StatusCode != 200 {
				t.Errorf("request %d from %s: %d", i, client, resp.StatusCode)
			}
		}
		if resp, _ := post(base, "203.0.113.1", `{"agent":"a"}`); resp.StatusCode != 429 {
			t.Errorf("client over its budget: %d", resp.StatusCode)
		}
		// A client cannot escape by prepending an address of its choice.
		if resp, _ := post(base, "198.51.100.99, 203.0.113.1", `{"agent":"a"}`); resp.StatusCode != 429 {
			t.Errorf("forged left part escaped the limit: %d", resp.StatusCode)
		}
	})
	t.Run("bodies over the limits", func(t *testing.T) {
		base := serveLoopback(t, newTestServer(t, Options{Chain: testChain(t)}))
		huge := `{"agent":"` + strings.Repeat("x", handshakeBodyLimit) + `"}`
		if resp, body := post(base, "", huge); resp.StatusCode != 413 || !bytes.Contains(body, []byte("urn:proofsite:problem:body-too-large")) {
			t.Errorf("oversized declaration: %d %s", resp.StatusCode, body)
		}
		if resp, body := post(base, "", strings.Repeat("x", MaxBodyBytes+1)); resp.StatusCode != 413 || !bytes.Contains(body, []byte("body-too-large")) {
			t.Errorf("body over the server limit: %d %s", resp.StatusCode, body)
		}
	})
}

func TestHandshakeNeverEchoes(t *testing.T) {
	srv := newTestServer(t, Options{Chain: testChain(t)})
	for _, tc := range []struct {
		desc, body, auth string
		status           int
		slug             string
	}{
		{"valid declaration", `{"agent":"secret-agent-name","purpose":"secret purpose"}`, "", 200, ""},
		{"unknown field", `{"agent":"secret-agent-name","token":"secret-token"}`, "", 400, "unknown-member"},
		{"credentials", `{"agent":"secret-agent-name"}`, "Bearer secret-token", 400, "credentials-not-accepted"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/handshake", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, body := do(t, srv.app, req)
			if resp.StatusCode != tc.status || !bytes.Contains(body, []byte(tc.slug)) {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
			if bytes.Contains(body, []byte("secret")) {
				t.Errorf("the declaration came back: %s", body)
			}
		})
	}
}

func TestLiveJSONIsFresh(t *testing.T) {
	srv := newTestServer(t, Options{Chain: testChain(t)})
	for _, path := range []string{"/api/ledger/verify", "/api/chain/status", "/api/health", "/api/v1", "/api/node/s1", "/api/nope"} {
		before := time.Now().UTC()
		resp, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, path, nil))
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", path, resp.Header.Get("Cache-Control"))
		}
		if resp.StatusCode != 200 {
			continue
		}
		var v struct {
			GeneratedAt time.Time `json:"generated_at"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.GeneratedAt.Before(before.Add(-time.Second)) {
			t.Errorf("%s: generated_at %v (request at %v)", path, v.GeneratedAt, before)
		}
	}
}

// examplePath fills a route's path parameters with ids the test site knows.
func examplePath(path string) string {
	if strings.HasPrefix(path, "/api/node/") {
		return strings.ReplaceAll(path, "{id}", "s1")
	}
	return strings.NewReplacer("{id}", "plex", "{node_id}", "plex").Replace(path)
}

func TestRoutesAnswer(t *testing.T) {
	l := newTestLedger(t, "")
	mem := openTestMemory(t, l, t.TempDir(), dual.Options{})
	evaluation, _ := testEvaluation(t)
	srv := newTestServer(t, Options{Chain: l, Memory: mem, Towns: openTestTowns(t, l, mem, t.TempDir(), echoResponder{}), Eval: evaluation})
	d := srv.define(newApp(nil), false)
	for _, e := range d.catalog() {
		if e.Kind != "live" || e.Method != http.MethodGet {
			continue
		}
		path := examplePath(e.Path)
		switch path { // required query parameters
		case "/api/v1/compliance":
			path += "?hours=24"
		case "/api/v1/verify":
			path += "?cert=" + strings.Repeat("0", 64)
		}
		t.Run(path, func(t *testing.T) {
			resp, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, path, nil))
			want := 200
			if slices.Contains([]string{"/api/incorporation", "/api/bylaws", "/api/picofsky", "/api/threat-model", "/api/s5/threat-intel"}, path) {
				want = 404 // not in the test site's records
			}
			if resp.StatusCode != want {
				t.Errorf("%d: %s", resp.StatusCode, body)
			}
		})
	}
}

// Describe says, from one definition, what Documents, Endpoints and
// Answers say from three.
func TestDescribe(t *testing.T) {
	site := *testSite()
	d, err := Describe(site)
	if err != nil {
		t.Fatal(err)
	}
	proof, _, err := Documents(site)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.OpenAPI, proof) {
		t.Error("Describe's OpenAPI document is not Documents'")
	}
	if !reflect.DeepEqual(d.Endpoints, Endpoints(site)) {
		t.Error("Describe's endpoints are not Endpoints'")
	}
	answers := Answers(site)
	for _, e := range d.Endpoints {
		for _, p := range []string{e.Path, e.Path + "?x=1", e.Path + "/nothing-here"} {
			if d.Answers(p) != answers(p) {
				t.Errorf("Describe answers %s: %v; Answers: %v", p, d.Answers(p), answers(p))
			}
		}
	}
	if d.Answers("/no/such/route") {
		t.Error("Describe answers a path no route serves")
	}
}
