package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/mcp"
)

// The real binaries, built once for the end-to-end tests.
var binaries struct {
	once                sync.Once
	dir                 string
	proofsite, verifier string
	err                 error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// binDirEnv names a folder holding the real proofsite and verify-ledger
// commands: make test builds them there once for every package's tests.
// Without it, buildBinaries builds them once per test binary.
const binDirEnv = "PROOFSITE_TEST_BIN_DIR"

func buildBinaries(t *testing.T) (proofsite, verifier string) {
	t.Helper()
	if dir := os.Getenv(binDirEnv); dir != "" {
		proofsite, verifier = filepath.Join(dir, "proofsite"), filepath.Join(dir, "verify-ledger")
		for _, bin := range []string{proofsite, verifier} {
			if _, err := os.Stat(bin); err != nil {
				t.Fatalf("%s: %v", binDirEnv, err)
			}
		}
		return proofsite, verifier
	}
	binaries.once.Do(func() {
		if binaries.dir, binaries.err = os.MkdirTemp("", "proofsite-e2e-"); binaries.err != nil {
			return
		}
		binaries.proofsite = filepath.Join(binaries.dir, "proofsite")
		binaries.verifier = filepath.Join(binaries.dir, "verify-ledger")
		for pkg, out := range map[string]string{".": binaries.proofsite, "../verify-ledger": binaries.verifier} {
			if out, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
				binaries.err = errors.New(string(out))
				return
			}
		}
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
	return binaries.proofsite, binaries.verifier
}

// server is a running proofsite serve process.
type server struct {
	cmd     *exec.Cmd
	base    string
	apiBase string // set when serve was given --api-addr
	stderr  *syncBuffer
}

// startServe runs the binary's serve command on 127.0.0.1:0 and waits for
// it to listen.
func startServe(t *testing.T, bin string, args ...string) *server {
	t.Helper()
	return startServeEnv(t, bin, nil, args...)
}

// startServeEnv is startServe with env (NAME=value) added to the
// inherited environment.
func startServeEnv(t *testing.T, bin string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	found, apiFound := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		site, api := regexp.MustCompile(`live edge on (http://\S+)`), regexp.MustCompile(`API origin on (http://\S+)`)
		for sc.Scan() {
			if m := site.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
			if m := api.FindStringSubmatch(sc.Text()); m != nil {
				apiFound <- m[1]
			}
		}
	}()
	select {
	case s.base = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not start:\n%s", s.stderr.String())
	}
	if slices.Contains(args, "--api-addr") {
		select {
		case s.apiBase = <-apiFound:
		case <-time.After(10 * time.Second):
			t.Fatalf("the API origin did not start:\n%s", s.stderr.String())
		}
	}
	return s
}

func (s *server) get(t *testing.T, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	return s.do(t, http.MethodGet, path, "", header...)
}

func (s *server) do(t *testing.T, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// fields decodes a JSON object.
func fields(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, body)
	}
	return m
}

// TestServeEndToEnd starts the real binary on a fresh data folder and calls
// every route over HTTP.
func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	proofsite, verifier := buildBinaries(t)
	dir := t.TempDir()
	data, public := filepath.Join(dir, "data"), filepath.Join(dir, "public")
	if out, err := exec.Command(proofsite, "build", "--content", "../../content", "--out", public, "--data", data).CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// No ledger init: serve sets up the chain by itself on first start.
	env := []string{"PROOFSITE_MEMORY_TOKEN=" + memoryToken}
	serveArgs := []string{"--content", "../../content", "--public", public, "--data", data, "--post-limit", "4/1m", "--api-addr", "127.0.0.1:0"}
	srv := startServeEnv(t, proofsite, env, serveArgs...)

	t.Run("every documented route answers", func(t *testing.T) {
		resp, body := srv.get(t, "/api/discover")
		if resp.StatusCode != 200 {
			t.Fatalf("discover: %d %s", resp.StatusCode, body)
		}
		var disc struct {
			Endpoints []struct{ Method, Path, Kind string }
		}
		json.Unmarshal(body, &disc)
		if len(disc.Endpoints) < 35 {
			t.Fatalf("only %d endpoints in the catalog", len(disc.Endpoints))
		}
		// The AI routes take their documented bodies; the receipt route
		// checks a receipt one of them issued.
		_, ember := srv.do(t, http.MethodPost, "/api/ember", `{"message":"How is the ledger verified?"}`, "Content-Type", "application/json")
		var issued struct{ Receipt json.RawMessage }
		if err := json.Unmarshal(ember, &issued); err != nil || len(issued.Receipt) == 0 {
			t.Fatalf("ember: no receipt in %s", ember)
		}
		receiptBody := `{"receipt":` + string(issued.Receipt) + `}`
		for _, e := range disc.Endpoints {
			path := strings.NewReplacer("{id}", "s1", "{node_id}", "case").Replace(e.Path)
			if strings.HasPrefix(e.Path, "/api/v1/towns/") {
				path = strings.ReplaceAll(e.Path, "{id}", "case")
			}
			var resp *http.Response
			var body []byte
			switch {
			case e.Method == http.MethodPost && mcp.IsEndpoint(path):
				resp, body = srv.do(t, e.Method, path, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{`+
					`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"1"},`+
					`"io.modelcontextprotocol/clientCapabilities":{}}}}`,
					"Content-Type", "application/json", mcp.HeaderProtocolVersion, mcp.ProtocolVersion, mcp.HeaderMethod, "tools/list")
			case e.Method == http.MethodPost:
				ex, ok := postExamples[e.Path]
				if !ok {
					t.Errorf("POST %s has no example request", e.Path)
					continue
				}
				if e.Path == "/api/agent/receipt" {
					ex.body = receiptBody
				}
				resp, body = srv.do(t, e.Method, path, ex.body, append([]string{"Content-Type", "application/json"}, ex.header...)...)
			default:
				resp, body = srv.get(t, exampleURL(path))
			}
			if ex := postExamples[e.Path]; e.Method == http.MethodPost && ex.status != 0 {
				if resp.StatusCode != ex.status {
					t.Errorf("%s %s: %d, want %d: %.200s", e.Method, path, resp.StatusCode, ex.status, body)
				}
				continue
			}
			if resp.StatusCode != 200 && resp.StatusCode != 201 {
				t.Errorf("%s %s (%s): %d %.200s", e.Method, path, e.Kind, resp.StatusCode, body)
			}
			if e.Kind == "live" && resp.Header.Get("Cache-Control") != "no-store" && path != "/api/v1/openapi.json" {
				t.Errorf("%s: Cache-Control %q", path, resp.Header.Get("Cache-Control"))
			}
		}
	})

	t.Run("the site names the MCP entry point it serves", func(t *testing.T) {
		var ai struct{ Entrypoints map[string]string }
		_, body := srv.get(t, "/.well-known/ai.json")
		if err := json.Unmarshal(body, &ai); err != nil {
			t.Fatal(err)
		}
		entry, ok := strings.CutPrefix(ai.Entrypoints["mcp"], "https://proof.endurance-commons.example")
		if !ok || entry != mcp.Endpoint {
			t.Fatalf("ai.json entrypoints.mcp = %q, want the site's %s", ai.Entrypoints["mcp"], mcp.Endpoint)
		}
		_, body = srv.get(t, "/api/discover")
		var disc struct{ Features map[string]bool }
		if json.Unmarshal(body, &disc); !disc.Features["mcp"] {
			t.Errorf("/api/discover does not list MCP as live: %s", body)
		}
		resp, body := srv.do(t, http.MethodPost, entry, `{"jsonrpc":"2.0","id":"e2e","method":"tools/call","params":{"name":"ledger_verdict","_meta":{`+
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"1"},`+
			`"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"Content-Type", "application/json", mcp.HeaderProtocolVersion, mcp.ProtocolVersion, mcp.HeaderMethod, "tools/call", mcp.HeaderName, "ledger_verdict")
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"verdict":"PASS_WITH_DOCUMENTED_STRICT_SEAM"`) {
			t.Errorf("tools/call ledger_verdict at %s: %d %.300s", entry, resp.StatusCode, body)
		}
	})

	t.Run("response shapes follow the specification", func(t *testing.T) {
		_, body := srv.get(t, "/api/ledger/verify")
		v := fields(t, body)
		for name, want := range map[string]any{"status": "ok", "verdict": "PASS_WITH_DOCUMENTED_STRICT_SEAM", "canonical_spine_valid": true,
			"strict_table_valid": false, "strict_table_break_at_block": 153.0, "valid": false, "valid_scope": "strict_table", "valid_deprecated": true} {
			if v[name] != want {
				t.Errorf("verify.%s = %v, want %v", name, v[name], want)
			}
		}
		if w, _ := v["warning"].(string); !strings.Contains(w, "block 153") {
			t.Errorf("warning %q does not name the seam", w)
		}
		_, body = srv.get(t, "/api/ledger/strict-table")
		tbl := fields(t, body)
		rows, _ := tbl["rows"].([]any) // the history's 224, and the blocks the routes above appended
		breaks, _ := tbl["breaks"].([]any)
		if tbl["ok"] != true || tbl["canonical_spine_valid"] != true || tbl["strict_table_valid"] != false || len(rows) < 224 || len(breaks) != 1 {
			t.Errorf("strict table: ok %v, %d rows, %d breaks", tbl["ok"], len(rows), len(breaks))
		}
		for _, r := range rows {
			row := r.(map[string]any)
			if _, leak := row["description"]; leak {
				t.Fatal("a row carries its description")
			}
			if _, leak := row["payload"]; leak {
				t.Fatal("a row carries its payload")
			}
		}
		_, body = srv.get(t, "/api/chain/status")
		st := fields(t, body)
		head, _ := st["head"].(map[string]any)
		genesis, _ := st["genesis"].(map[string]any)
		keys, _ := st["keys"].([]any)
		if st["status"] != "ok" || st["canonical_spine_valid"] != true || head["index"] != float64(len(rows)-1) || genesis["index"] != 0.0 || len(keys) < 2 {
			t.Errorf("chain status: %s", body)
		}
		if _, ok := st["day"].(float64); !ok {
			t.Errorf("chain status day: %v", st["day"])
		}
		_, body = srv.get(t, "/api/shares")
		var shares struct {
			Record struct {
				Authorized  int  `json:"authorized_shares"`
				SingleClass bool `json:"single_class"`
			}
		}
		json.Unmarshal(body, &shares)
		if shares.Record.Authorized != 100_000_000 || !shares.Record.SingleClass {
			t.Errorf("shares: %s", body)
		}
	})

	t.Run("timestamps are generated at request time", func(t *testing.T) {
		for _, path := range []string{"/api/ledger/verify", "/api/chain/status", "/api/health"} {
			_, first := srv.get(t, path)
			time.Sleep(1100 * time.Millisecond)
			_, second := srv.get(t, path)
			a, b := fields(t, first)["generated_at"], fields(t, second)["generated_at"]
			if a == nil || a == b {
				t.Errorf("%s: generated_at %v then %v", path, a, b)
			}
		}
	})

	t.Run("refusals and errors are problems", func(t *testing.T) {
		for _, tc := range []struct {
			method, path, body string
			status             int
			problem            string
		}{
			{"GET", "/api/ledger/strict-table?preimage=true", "", 403, "metadata-only"},
			{"GET", "/api/chain/strict-table?description=true", "", 403, "metadata-only"},
			{"GET", "/api/ledger/rows?preimage=1", "", 403, "metadata-only"},
			{"GET", "/api/node/s99", "", 404, "not-found"},
			{"GET", "/api/no-such-route", "", 404, "not-found"},
			{"POST", "/api/v1/handshake", `{"agent":"` + strings.Repeat("x", 5000) + `"}`, 413, "body-too-large"},
			{"POST", "/api/v1/handshake", `{"agent":"a","api_key":"k"}`, 400, "unknown-member"},
		} {
			resp, body := srv.do(t, tc.method, tc.path, tc.body, "Content-Type", "application/json")
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/problem+json" ||
				!bytes.Contains(body, []byte("urn:proofsite:problem:"+tc.problem)) {
				t.Errorf("%s %s: %d %s %.200s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
		}
		var last *http.Response
		for range 5 {
			last, _ = srv.do(t, "POST", "/api/v1/handshake", `{"agent":"a"}`, "Content-Type", "application/json")
		}
		if last.StatusCode != 429 || last.Header.Get("Retry-After") == "" {
			t.Errorf("over the POST limit: %d, Retry-After %q", last.StatusCode, last.Header.Get("Retry-After"))
		}
	})

	t.Run("the API origin serves the v1 surface only", func(t *testing.T) {
		api := &server{base: srv.apiBase}
		for path, want := range map[string]int{"/api/v1": 200, "/api/v1/openapi.json": 200, "/api/chain/latest": 200, "/api/v1/handshake": 200,
			"/api/ledger/verify": 404, "/gate.html": 404} {
			if resp, body := api.get(t, path); resp.StatusCode != want {
				t.Errorf("API origin %s: %d, want %d: %.120s", path, resp.StatusCode, want, body)
			}
		}
	})

	t.Run("static pages negotiate markdown", func(t *testing.T) {
		resp, body := srv.get(t, "/gate.html", "Accept", "text/markdown")
		if resp.Header.Get("Content-Type") != "text/markdown; charset=utf-8" || !bytes.HasPrefix(body, []byte("# ")) {
			t.Errorf("markdown twin: %s %.80s", resp.Header.Get("Content-Type"), body)
		}
		resp, _ = srv.get(t, "/gate.html")
		if etag := resp.Header.Get("ETag"); etag == "" {
			t.Error("no ETag")
		} else if resp, _ := srv.get(t, "/gate.html", "If-None-Match", etag); resp.StatusCode != 304 {
			t.Errorf("revalidation: %d", resp.StatusCode)
		}
	})

	t.Run("the downloadable verifier agrees with the server", func(t *testing.T) {
		// The auditor pins the trust document (data/keys.json, published as /keys.json).
		out, err := exec.Command(verifier, "--keys", filepath.Join(data, "keys.json"), srv.base).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("VERDICT PASS_WITH_DOCUMENTED_STRICT_SEAM")) {
			t.Errorf("verify-ledger %s: %v\n%s", srv.base, err, out)
		}
		// Offline: the export streamed by the running server (no second
		// process on the store, nothing private).
		resp, export := srv.get(t, "/api/ledger/export")
		file := filepath.Join(t.TempDir(), "export.jsonl")
		os.WriteFile(file, export, 0o644)
		out, err = exec.Command(verifier, "--keys", filepath.Join(data, "keys.json"), file).CombinedOutput()
		if resp.StatusCode != 200 || err != nil || !bytes.Contains(out, []byte("VERDICT PASS_WITH_DOCUMENTED_STRICT_SEAM")) {
			t.Errorf("verify-ledger on the served export (%d): %v\n%s", resp.StatusCode, err, out)
		}
		_, published := srv.get(t, "/downloads/verify-ledger.go")
		source, _ := os.ReadFile("../verify-ledger/main.go")
		if !bytes.Equal(published, source) {
			t.Error("the published verifier is not the verifier's source")
		}
	})

	t.Run("SIGTERM drains and closes the store", func(t *testing.T) {
		if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop on SIGTERM")
		}
		// The store was closed cleanly: it opens and verifies at once.
		out, err := exec.Command(proofsite, "ledger", "verify", "--data", data, "--content", "../../content").CombinedOutput()
		if err != nil {
			t.Fatalf("ledger verify after shutdown: %v\n%s", err, out)
		}
	})

	t.Run("what the routes wrote survives a restart", func(t *testing.T) {
		again := startServeEnv(t, proofsite, env, serveArgs...)
		_, body := again.get(t, "/api/memory/retrieve/case")
		var got struct {
			Count    int
			Memories []struct{ Content json.RawMessage }
		}
		json.Unmarshal(body, &got)
		if got.Count != 1 || string(got.Memories[0].Content) != postExamples["/api/memory/store"].content {
			t.Errorf("memories of case after the restart: %s", body)
		}
		_, body = again.get(t, "/api/memory/status")
		if st := fields(t, body); st["state"] != "in_sync" {
			t.Errorf("memory status after the restart: %s", body)
		}
		_, body = again.get(t, "/api/v1/towns/case/wall?limit=1")
		var wall struct {
			Signatures []struct{ Signer string }
		}
		json.Unmarshal(body, &wall)
		if len(wall.Signatures) != 1 || wall.Signatures[0].Signer != "e2e" {
			t.Errorf("the wall of case after the restart: %s", body)
		}
		_, body = again.get(t, "/api/v1/towns/case")
		var town struct {
			Messages       int
			RecentMessages []struct {
				Message       string
				MemoriesGiven int `json:"memories_given"`
				Reply         struct{ Node, Provider, Reply string }
			} `json:"recent_messages"`
		}
		json.Unmarshal(body, &town)
		if town.Messages != 1 || len(town.RecentMessages) != 1 || town.RecentMessages[0].Message != "What is the seam at 153?" ||
			town.RecentMessages[0].Reply.Node != "S2_CASE" || town.RecentMessages[0].Reply.Provider != "offline" || town.RecentMessages[0].Reply.Reply == "" {
			t.Errorf("the chat of case after the restart: %s", body)
		}
	})
}

// memoryToken is the bearer token the end-to-end server accepts.
const memoryToken = "e2e-memory-token-0123456789abcdef0123456789"

// postExamples are a request each POST route answers with success.
var postExamples = map[string]struct {
	body, content string
	header        []string
	status        int // the status expected, when not success
}{
	"/api/v1/handshake": {body: `{"agent":"e2e"}`},
	"/api/v1/evaluate":  {body: `{"text":"What is the capital of France?"}`},
	"/api/v1/govern":    {body: `{"prompt":"What is the capital of France?","response":"Paris."}`},
	"/api/v1/certify":   {body: `{"prompt":"What is the capital of France?","response":"Paris."}`},
	"/api/memory/store": {body: `{"node_id":"case","content":"stored by the end-to-end test"}`, content: `"stored by the end-to-end test"`,
		header: []string{"Authorization", "Bearer " + memoryToken}},
	"/api/v1/towns/{id}/sign": {body: `{"signer":"e2e","message":"Signed by the end-to-end test."}`},
	"/api/chat":               {body: `{"message":"How is the ledger verified?","node":"S2_CASE"}`},
	"/api/pulse":              {body: `{"topic":"verification"}`},
	"/api/voice":              {body: `{"text":"The ledger verifies.","mode":"standard"}`},
	"/api/ember":              {body: `{"message":"How is the ledger verified?"}`},
	"/api/lumen":              {body: `{"message":"How is the ledger verified?"}`},
	"/api/v1/query":           {body: `{"question":"How is the ledger verified?"}`},
	"/api/agent/receipt":      {}, // the receipt of an answer, filled in by the test
	// The towns' nodes answer offline (no key is set), with the town's memory.
	"/api/v1/towns/{id}/chat":       {body: `{"message":"What is the seam at 153?"}`},
	"/api/v1/towns/{id}/inter-node": {body: `{"to":"tars","payload":"A second reading, please."}`},
}
