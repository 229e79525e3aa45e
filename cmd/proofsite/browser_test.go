package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/proofsite/proofsite/cmd"
)

// browserHarness runs cmd/verify-tiles.js under node as the home page runs
// it: the element it fills, localStorage, and the browser's fetch and
// WebCrypto (node's own). It prints the verdict the script computed.
const browserHarness = `
const fs = require("fs");
const [script, log, keys] = process.argv.slice(2);
const node = (tag) => ({ tag, textContent: "", children: [], append(...c) { this.children.push(...c); } });
const el = Object.assign(node("div"), { dataset: { log, keys }, classList: { toggle() {} }, replaceChildren() { this.children = []; } });
globalThis.document = { getElementById: (id) => (id === "tiles-verdict" ? el : null), createElement: node };
const kept = new Map();
globalThis.localStorage = { getItem: (k) => (kept.has(k) ? kept.get(k) : null), setItem: (k, v) => kept.set(k, String(v)) };
const text = (n) => (typeof n === "string" ? n : n.textContent + n.children.map(text).join(" "));
eval(fs.readFileSync(script, "utf8"));
const done = setInterval(() => {
  if (el.dataset.verdict) { clearInterval(done); console.log(JSON.stringify({ verdict: el.dataset.verdict, text: el.children.map(text).join("\n") })); }
}, 10);
`

type browserResult struct {
	Verdict string `json:"verdict"`
	Text    string `json:"text"`
}

func runBrowserVerifier(t *testing.T, log, keys string) browserResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the browser verifier's test needs node (make test installs Debian's nodejs): %v", err)
	}
	dir := t.TempDir()
	script, harness := filepath.Join(dir, "verify-tiles.js"), filepath.Join(dir, "harness.js")
	os.WriteFile(script, cmd.BrowserVerifierSource, 0o644)
	os.WriteFile(harness, []byte(browserHarness), 0o644)
	out, err := exec.Command(node, harness, script, log, keys).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var r browserResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("harness output: %v\n%s", err, out)
	}
	return r
}

// The home page runs the browser verifier; run as a browser runs it,
// against a fresh instance, it computes the verdict from the tiles alone,
// and against a copy of the log with one byte changed it fails, though
// the copy's host would still report a pass: it never reads a verdict.
func TestBrowserVerifier(t *testing.T) {
	t.Parallel()
	srv, public := publishedInstance(t)
	_, home := srv.get(t, "/")
	if !bytes.Contains(home, []byte(`id="tiles-verdict"`)) || !bytes.Contains(home, []byte(`src="/downloads/verify-tiles.js"`)) || !bytes.Contains(home, []byte("<noscript>")) {
		t.Fatal("the home page does not run the browser verifier, or has no fallback without scripts")
	}
	if _, js := srv.get(t, "/downloads/verify-tiles.js"); !bytes.Equal(js, cmd.BrowserVerifierSource) {
		t.Fatal("the published script is not cmd/verify-tiles.js")
	}
	r := runBrowserVerifier(t, srv.base+"/ledger/", srv.base+"/keys.json")
	if r.Verdict != "PASS_WITH_DOCUMENTED_STRICT_SEAM" || !strings.Contains(r.Text, "224 rows") {
		t.Fatalf("browser verdict %q:\n%s", r.Verdict, r.Text)
	}

	// A copy of the published log, served with one row changed, and a
	// server verdict that says everything passed.
	var mu sync.Mutex
	var asked []string
	dir := filepath.Join(public, "ledger")
	tampered := map[string][]byte{}
	data, err := os.ReadFile(filepath.Join(dir, "tile/entries/000.p/224"))
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(data)
	at := bytes.Index(flipped, []byte(`"payload_hash":"`)) + len(`"payload_hash":"`)
	flipped[at] ^= 1 // another hex digit: the same length, another row
	tampered["/ledger/tile/entries/000.p/224"] = flipped
	files := http.FileServer(http.Dir(public))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	copySrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"verdict":"PASS","canonical_spine_valid":true}`))
			return
		}
		if b, ok := tampered[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		files.ServeHTTP(w, r)
	})}
	go copySrv.Serve(ln)
	defer copySrv.Close()
	base := "http://" + ln.Addr().String()
	if r := runBrowserVerifier(t, base+"/ledger/", base+"/keys.json"); r.Verdict != "FAIL_CHECKPOINT_INVALID" || !strings.Contains(r.Text, "do not hash") {
		t.Fatalf("a changed row: browser verdict %q\n%s", r.Verdict, r.Text)
	}
	tampered["/ledger/tile/entries/000.p/224"] = data[:len(data)-7] // a bundle cut short
	if r := runBrowserVerifier(t, base+"/ledger/", base+"/keys.json"); r.Verdict != "FAIL_CHECKPOINT_INVALID" {
		t.Fatalf("a truncated bundle: browser verdict %q\n%s", r.Verdict, r.Text)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(asked, func(p string) bool { return strings.HasPrefix(p, "/api/") }) {
		t.Fatalf("the browser verifier asked the server's API: %v", asked)
	}
}
