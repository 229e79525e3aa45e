package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// TestEvaluateRequest checks the evaluate target's bodies: one per text,
// each {"text": 2,048 bytes of valid UTF-8}, all different. What the
// evaluator decides on them is not asserted here: the target measures the
// route on ordinary texts whatever the verdict (at edfcf14 the offline
// model sends the wifi question to review, a false positive).
func TestEvaluateRequest(t *testing.T) {
	r := evaluateRequest()
	if len(r.bodies) < 4 || !slices.Equal(r.headers, [][2]string{{"Content-Type", "application/json"}}) {
		t.Fatalf("%d bodies, headers %q", len(r.bodies), r.headers)
	}
	for i, body := range r.bodies {
		var in map[string]string
		if err := json.Unmarshal([]byte(body), &in); err != nil || len(in) != 1 {
			t.Fatalf("body %d: %v: %s", i, err, body)
		}
		text := in["text"]
		if len(text) != evaluateTextBytes || !utf8.ValidString(text) || slices.Index(r.bodies, body) != i {
			t.Errorf("body %d: %d bytes, valid UTF-8 %v, first of its text %v", i, len(text), utf8.ValidString(text), slices.Index(r.bodies, body) == i)
		}
	}
}

// TestEvaluateScriptRotates runs wrk with the evaluate target's script
// against a server on loopback that keeps what it receives: every request
// is a POST of JSON, and every body is sent.
func TestEvaluateScriptRotates(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal("wrk not found: install it (apt-get install -y wrk); make bench-http does")
	}
	r := evaluateRequest()
	var mu sync.Mutex
	seen := map[string]int{}
	var bad []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		seen[string(body)]++
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || req.URL.Path != evaluatePath {
			bad = append(bad, req.Method+" "+req.URL.Path+" "+req.Header.Get("Content-Type"))
		}
		mu.Unlock()
		w.Write([]byte("{}"))
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	script := filepath.Join(t.TempDir(), "evaluate.lua")
	if err := os.WriteFile(script, []byte(r.luaScript()), 0o644); err != nil {
		t.Fatal(err)
	}
	res, out, _, err := runWrk(context.Background(), wrk, wrkRun{threads: 1, connections: 2, duration: time.Second,
		url: "http://" + ln.Addr().String() + evaluatePath, script: script})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 || !res.clean() || res.Requests < int64(len(r.bodies)) {
		t.Fatalf("bad requests %q; wrk:\n%s", bad, out)
	}
	for i, body := range r.bodies {
		if seen[body] == 0 {
			t.Errorf("body %d never sent", i)
		}
	}
	if len(seen) != len(r.bodies) {
		t.Errorf("%d distinct bodies received, want %d", len(seen), len(r.bodies))
	}
}
