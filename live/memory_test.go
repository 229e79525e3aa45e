package live

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/memory"
	"github.com/proofsite/proofsite/live/memory/dual"
)

// testToken is the bearer token the memory tests' servers accept.
const testToken = "test-token-0123456789abcdef0123456789abcdef"

func testTokens(t testing.TB) MemoryTokens {
	t.Helper()
	h, err := memory.TokenHash(testToken)
	if err != nil {
		t.Fatal(err)
	}
	return MemoryTokens{memory.NewTokens(h)}
}

// openTestMemory opens the dual store in dir over l's chain; it is closed
// when the test ends (or earlier by the test).
func openTestMemory(t testing.TB, l testLedger, dir string, opts dual.Options) *dual.Store {
	t.Helper()
	opts.Chain = l
	if opts.Nodes == nil {
		opts.Nodes = []string{"plex", "case"}
	}
	m, err := dual.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// client calls a server on 127.0.0.1.
type client struct {
	t    testing.TB
	base string
}

// do sends a request; body, when not empty, goes as application/json, and
// header holds name, value pairs.
func (c client) do(method, path, body string, header ...string) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// json sends a request and decodes a JSON answer of status want into v.
func (c client) json(method, path, body string, want int, v any, header ...string) {
	c.t.Helper()
	resp, b := c.do(method, path, body, header...)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// problemOf checks that a response is a problem of status and slug.
func problemOf(t testing.TB, resp *http.Response, body []byte, status int, slug string) {
	t.Helper()
	var p struct{ Type, Detail string }
	json.Unmarshal(body, &p)
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/problem+json" || p.Type != ProblemTypeBase+slug {
		t.Fatalf("%d %s %s, want %d %s", resp.StatusCode, resp.Header.Get("Content-Type"), body, status, slug)
	}
}

// memoryServer is a live edge with a real memory store on 127.0.0.1.
type memoryServer struct {
	client
	ledger testLedger
	memory *dual.Store
	dir    string
}

func startMemoryServer(t *testing.T, dir string, l testLedger, opts dual.Options) *memoryServer {
	t.Helper()
	m := openTestMemory(t, l, filepath.Join(dir, "memory"), opts)
	srv := newTestServer(t, Options{Chain: l, Memory: m, MemoryTokens: testTokens(t)})
	return &memoryServer{client: client{t, serveLoopback(t, srv)}, ledger: l, memory: m, dir: dir}
}

func (ms *memoryServer) status() MemoryStatus {
	var st MemoryStatus
	ms.json(http.MethodGet, "/api/memory/status", "", 200, &st)
	return st
}

// requireNothingStored checks that neither the chain nor either store
// holds more than they did.
func (ms *memoryServer) requireNothingStored(blocks int64, memories int64) {
	ms.t.Helper()
	st := ms.status()
	if ms.ledger.Count() != blocks || *st.Primary.Memories != memories || *st.Secondary.Memories != memories {
		ms.t.Fatalf("something was written: %d blocks (had %d), stores %d/%d (had %d)", ms.ledger.Count(), blocks,
			*st.Primary.Memories, *st.Secondary.Memories, memories)
	}
}

func TestMemoryRoutes(t *testing.T) {
	dir := t.TempDir()
	l := newTestLedger(t, filepath.Join(dir, "ledger"))
	ms := startMemoryServer(t, dir, l, dual.Options{})
	bearer := "Bearer " + testToken
	blocks := l.Count()

	st := ms.status()
	if st.State != memory.StateInSync || st.Primary.Backend != "badger" || st.Secondary.Backend != dual.BackendSQLite || *st.Primary.Memories != 0 {
		t.Fatalf("fresh status: %+v", st)
	}

	t.Run("refusals store nothing", func(t *testing.T) {
		body := `{"node_id":"plex","content":"refused"}`
		for _, tc := range []struct {
			desc, path, body string
			header           []string
			status           int
			slug, challenge  string
		}{
			{"no token", "/api/memory/store", body, nil, 401, "unauthorized", `Bearer realm="proofsite memory"`},
			{"token in the query string", "/api/memory/store?access_token=" + testToken + "&token=" + testToken, body, nil, 401, "unauthorized", `Bearer realm="proofsite memory"`},
			{"wrong token", "/api/memory/store", body, []string{"Authorization", "Bearer " + strings.Repeat("x", 40)}, 401, "unauthorized", `Bearer realm="proofsite memory", error="invalid_token"`},
			{"token of another scheme", "/api/memory/store", body, []string{"Authorization", "Basic " + testToken}, 401, "unauthorized", `Bearer realm="proofsite memory"`},
			{"token with a suffix", "/api/memory/store", body, []string{"Authorization", bearer + "x"}, 401, "unauthorized", `Bearer realm="proofsite memory", error="invalid_token"`},
			{"no token and a bad body", "/api/memory/store", `{"node_id":1}`, nil, 401, "unauthorized", `Bearer realm="proofsite memory"`},
			{"malformed node id", "/api/memory/store", `{"node_id":"Plex","content":"x"}`, []string{"Authorization", bearer}, 400, "invalid-request", ""},
			{"content null", "/api/memory/store", `{"node_id":"plex","content":null}`, []string{"Authorization", bearer}, 400, "invalid-request", ""},
			{"content missing", "/api/memory/store", `{"node_id":"plex"}`, []string{"Authorization", bearer}, 400, "invalid-request", ""},
			{"duplicate member in content", "/api/memory/store", `{"node_id":"plex","content":{"a":1,"a":2}}`, []string{"Authorization", bearer}, 400, "duplicate-member", ""},
			{"integer beyond 2^53", "/api/memory/store", `{"node_id":"plex","content":9007199254740993}`, []string{"Authorization", bearer}, 400, "invalid-request", ""},
			{"unknown member", "/api/memory/store", `{"node_id":"plex","content":"x","token":"y"}`, []string{"Authorization", bearer}, 400, "unknown-member", ""},
			{"node not on the roster", "/api/memory/store", `{"node_id":"vega","content":"x"}`, []string{"Authorization", bearer}, 422, "unknown-node", ""},
		} {
			t.Run(tc.desc, func(t *testing.T) {
				resp, b := ms.do(http.MethodPost, tc.path, tc.body, tc.header...)
				problemOf(t, resp, b, tc.status, tc.slug)
				if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
					t.Errorf("WWW-Authenticate %q, want %q", got, tc.challenge)
				}
				if strings.Contains(string(b), testToken) {
					t.Error("the problem quotes the token")
				}
				ms.requireNothingStored(blocks, 0)
			})
		}
	})

	var stored StoreResult
	t.Run("store, then the same again", func(t *testing.T) {
		ms.json(http.MethodPost, "/api/memory/store", `{"node_id":"plex","content":{"note":"the seam at 153 is documented","n":1}}`, 201, &stored, "Authorization", bearer)
		m := stored.Memory
		if !stored.Created || m.NodeID != "plex" || string(m.Content) != `{"n":1,"note":"the seam at 153 is documented"}` || m.ContentHash != sha256.Sum256(m.Content) {
			t.Fatalf("stored: %+v", stored)
		}
		// The witness is the chain's new head, and it commits to the memory.
		b, err := l.BlockByIndex(m.Witness.BlockIndex)
		if err != nil || l.Count() != blocks+1 || b.Hash() != m.Witness.BlockHash || b.Hash() != l.Head().Hash() {
			t.Fatalf("witness %+v: block %v, %v; %d blocks", m.Witness, b.Hash(), err, l.Count())
		}
		got, err := ms.memory.Get(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.CheckWitness(b); err != nil {
			t.Fatal(err)
		}
		var again StoreResult
		ms.json(http.MethodPost, "/api/memory/store", `{"content":{"n":1,"note":"the seam at 153 is documented"},"node_id":"plex"}`, 200, &again, "Authorization", bearer)
		if again.Created || again.Memory.ID != m.ID || again.Memory.Witness != m.Witness || l.Count() != blocks+1 {
			t.Fatalf("stored again: %+v", again)
		}
		if st := ms.status(); st.State != memory.StateInSync || *st.Primary.Memories != 1 || *st.Secondary.Memories != 1 || st.OutboxBacklog != 0 {
			t.Fatalf("status: %+v", st)
		}
	})

	t.Run("retrieve", func(t *testing.T) {
		var got Memories
		ms.json(http.MethodGet, "/api/memory/retrieve/plex", "", 200, &got)
		if got.NodeID != "plex" || got.Count != 1 || got.Memories[0].ID != stored.Memory.ID || got.Memories[0].Witness != stored.Memory.Witness {
			t.Fatalf("retrieve: %+v", got)
		}
		ms.json(http.MethodGet, "/api/memory/retrieve/case", "", 200, &got)
		if got.Count != 0 || got.Memories == nil {
			t.Fatalf("retrieve case: %+v", got)
		}
		for path, want := range map[string]struct {
			status int
			slug   string
		}{
			"/api/memory/retrieve/vega":                 {404, "not-found"},
			"/api/memory/retrieve/Plex":                 {400, "invalid-request"},
			"/api/memory/retrieve/plex?limit=0":         {400, "invalid-request"},
			"/api/memory/retrieve/plex?limit=x":         {400, "invalid-request"},
			"/api/memory/retrieve/plex?limit=1&limit=2": {400, "repeated-parameter"},
		} {
			resp, b := ms.do(http.MethodGet, path, "")
			problemOf(t, resp, b, want.status, want.slug)
		}
	})
}

// TestMemorySurvivesRestart stores through the route, stops the server and
// both stores, and reads the memory back from a new server on the same
// data folder.
func TestMemorySurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	l := newTestLedger(t, filepath.Join(dir, "ledger"))
	ms := startMemoryServer(t, dir, l, dual.Options{})
	var stored StoreResult
	ms.json(http.MethodPost, "/api/memory/store", `{"node_id":"case","content":"kept across restarts"}`, 201, &stored, "Authorization", "Bearer "+testToken)
	if err := ms.memory.Close(); err != nil {
		t.Fatal(err)
	}

	again := startMemoryServer(t, dir, l, dual.Options{})
	var got Memories
	again.json(http.MethodGet, "/api/memory/retrieve/case", "", 200, &got)
	if got.Count != 1 || got.Memories[0].ID != stored.Memory.ID || got.Memories[0].Witness != stored.Memory.Witness {
		t.Fatalf("after the restart: %+v", got)
	}
	if st := again.status(); st.State != memory.StateInSync || *st.Primary.Memories != 1 || *st.Secondary.Memories != 1 {
		t.Fatalf("status after the restart: %+v", st)
	}
}

// TestMemorySecondaryOutage takes the SQL store down under a running
// server (another connection holds SQLite's write lock past the busy
// timeout): the store route answers 503 naming the secondary write, the
// status shows the memory waiting in the outbox, and once the lock is
// released the background replicator (Run) converges.
func TestMemorySecondaryOutage(t *testing.T) {
	dir := t.TempDir()
	l := newTestLedger(t, filepath.Join(dir, "ledger"))
	ms := startMemoryServer(t, dir, l, dual.Options{SecondaryTimeout: 300 * time.Millisecond, ReplicateEvery: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ms.memory.Run(ctx) }()
	defer func() { cancel(); <-done }()

	other, err := sql.Open("sqlite", filepath.Join(dir, "memory", "secondary.sqlite")+"?_txlock=immediate&_busy_timeout=1000")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.BeginTx(ctx, nil) // takes SQLite's write lock
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec("DELETE FROM memories WHERE 0"); err != nil {
		t.Fatal(err)
	}

	resp, b := ms.do(http.MethodPost, "/api/memory/store", `{"node_id":"plex","content":"written while the SQL store is locked"}`, "Authorization", "Bearer "+testToken)
	problemOf(t, resp, b, 503, "write-failed")
	if !strings.Contains(string(b), "secondary write (sqlite)") {
		t.Fatalf("the problem does not name the write: %s", b)
	}
	st := ms.status()
	if st.State != memory.StateCatchingUp || st.OutboxBacklog != 1 || st.OldestPendingAt == nil || *st.Primary.Memories != 1 || *st.Secondary.Memories != 0 {
		t.Fatalf("status during the outage: %+v", st)
	}

	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for st = ms.status(); st.State != memory.StateInSync; st = ms.status() {
		if time.Now().After(deadline) {
			t.Fatalf("not converged: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.OutboxBacklog != 0 || *st.Primary.Memories != 1 || *st.Secondary.Memories != 1 {
		t.Fatalf("converged status: %+v", st)
	}
}
