package live

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/proofsite/proofsite/ledger"
)

// reference is what huma's own JSON format writes for v.
func reference(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := huma.DefaultJSONFormat.Marshal(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// generatedAt reads a body's generated_at.
func generatedAt(t *testing.T, body []byte) time.Time {
	t.Helper()
	var f Fresh
	if err := json.Unmarshal(body, &f); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return f.GeneratedAt
}

// The pre-encoded routes answer byte for byte what huma would have written
// for the same document, every time.
func TestPreEncodedRoutesMatchHuma(t *testing.T) {
	chain := testChain(t)
	srv := newTestServer(t, Options{Chain: chain})
	for i := range 3 {
		_, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, "/api/ledger/verify", nil))
		if i == 0 && (srv.verdictJSON.last.Load() == nil || srv.statusJSON.last.Load() != nil) {
			t.Fatal("verify did not go through its memo")
		}
		v, _ := chain.Verdict()
		if want := reference(t, VerdictResponse{Verdict: v, Fresh: Fresh{generatedAt(t, body)}}); !bytes.Equal(body, want) {
			t.Errorf("verify:\n got %s\nwant %s", body, want)
		}
		_, body = do(t, srv.app, httptest.NewRequest(http.MethodGet, "/api/chain/status", nil))
		at := generatedAt(t, body)
		if want := reference(t, ChainStatus{ChainState: srv.chainState(at), Fresh: Fresh{at}}); !bytes.Equal(body, want) {
			t.Errorf("status:\n got %s\nwant %s", body, want)
		}
	}
}

// changingChain is the real store with a verdict, head and count the test
// replaces, as an append or a full walk would; each change is a new version.
type changingChain struct {
	Chain
	verdict ledger.Verdict
	head    ledger.Block
	count   int64
	version uint64
}

func (c *changingChain) Verdict() (ledger.Verdict, bool) { return c.verdict, true }
func (c *changingChain) Head() ledger.Block              { return c.head }
func (c *changingChain) Count() int64                    { return c.count }
func (c *changingChain) Version() uint64                 { return c.version }

func TestPreEncodedRoutesFollowTheChain(t *testing.T) {
	store := testChain(t)
	v, _ := store.Verdict()
	chain := &changingChain{Chain: store, verdict: v, head: store.Head(), count: store.Count()}
	srv := newTestServer(t, Options{Chain: chain})
	get := func(path string) map[string]any {
		resp, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, path, nil))
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v: %s", path, resp.StatusCode, err, body)
		}
		return m
	}
	if got := get("/api/ledger/verify")["appended_since_full_walk"]; got != 0.0 {
		t.Fatalf("appended_since_full_walk = %v before the change", got)
	}
	get("/api/chain/status")

	next := v
	next.AppendedSinceWalk = 1
	next.Checkpoint = &ledger.Checkpoint{Size: v.Checkpoint.Size + 1, Root: ledger.Hash{1}}
	next.Verdict = "FAIL"
	chain.verdict = next
	chain.version++
	m := get("/api/ledger/verify")
	if m["appended_since_full_walk"] != 1.0 || m["verdict"] != "FAIL" {
		t.Errorf("verify after the change: %v", m)
	}
	st := get("/api/chain/status")
	if st["status"] != "failing" || st["verdict"] != "FAIL" || st["checkpoint"].(map[string]any)["size"] != float64(v.Checkpoint.Size+1) {
		t.Errorf("status after the change: %v", st)
	}

	// Each input of the status alone: the answer is always what the chain
	// says at that moment.
	walked := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, change := range []struct {
		desc string
		do   func()
	}{
		{"head", func() { chain.head = store.Genesis() }},
		{"count", func() { chain.count++ }},
		{"spine validity", func() { chain.verdict.CanonicalSpineValid = !chain.verdict.CanonicalSpineValid }},
		{"last full walk", func() { chain.verdict.LastFullWalkAt = &walked }},
		{"pass", func() { chain.verdict.Verdict = ledger.VerdictPass }},
	} {
		change.do()
		chain.version++
		_, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, "/api/chain/status", nil))
		at := generatedAt(t, body)
		if want := reference(t, ChainStatus{ChainState: srv.chainState(at), Fresh: Fresh{at}}); !bytes.Equal(body, want) {
			t.Errorf("after a change of %s:\n got %s\nwant %s", change.desc, body, want)
		}
	}
}

func TestDocMemo(t *testing.T) {
	type doc struct {
		Name string `json:"name"`
		HTML string `json:"html"`
	}
	var m docMemo[doc]
	builds := 0
	build := func(d doc) func() doc { return func() doc { builds++; return d } }
	d := doc{Name: "a", HTML: "<b>&</b>"}
	_, first, err := m.get(1, 0, build(d))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"a","html":"<b>&</b>"}`; string(first) != want {
		t.Errorf("got %s, want %s (huma does not escape HTML)", first, want)
	}
	if _, again, _ := m.get(1, 0, build(doc{Name: "not built"})); &again[0] != &first[0] || builds != 1 {
		t.Errorf("the same version and day were built %d times and encoded again", builds)
	}
	for _, tc := range []struct {
		version uint64
		day     int64
		doc     doc
	}{{2, 0, doc{Name: "b"}}, {2, 1, doc{Name: "c"}}, {3, 1, doc{Name: "d", HTML: d.HTML}}} {
		got, enc, _ := m.get(tc.version, tc.day, build(tc.doc))
		if want := reference(t, tc.doc); !bytes.Equal(append(enc, '\n'), want) || got != tc.doc {
			t.Errorf("version %d day %d: got %s, want %s", tc.version, tc.day, enc, want)
		}
	}
	if builds != 4 {
		t.Errorf("%d builds for 4 different versions and days", builds)
	}
}

// The status is built once per chain version and day.
func TestChainStatusMemo(t *testing.T) {
	srv := newTestServer(t, Options{Chain: testChain(t)})
	a, b := srv.chainStatus(), srv.chainStatus()
	if a.doc == nil || &a.doc[0] != &b.doc[0] || a.Head != b.Head {
		t.Error("the status was built again for the same chain")
	}
	if !b.GeneratedAt.After(a.GeneratedAt) && !b.GeneratedAt.Equal(a.GeneratedAt) {
		t.Errorf("generated_at went back: %v then %v", a.GeneratedAt, b.GeneratedAt)
	}
}

func TestWriteWithGeneratedAt(t *testing.T) {
	type one struct {
		A string `json:"a"`
	}
	type withOne struct {
		one
		Fresh
	}
	type withNone struct {
		Fresh
	}
	for _, at := range []time.Time{
		time.Date(2026, 11, 21, 16, 27, 30, 178010072, time.UTC),
		time.Date(2026, 11, 21, 16, 27, 30, 0, time.UTC),
		time.Date(2026, 11, 21, 16, 27, 30, 500000000, time.UTC),
	} {
		for _, tc := range []struct {
			doc  string
			want any
		}{{`{"a":"x"}`, withOne{one{"x"}, Fresh{at}}}, {`{}`, withNone{Fresh{at}}}} {
			var got bytes.Buffer
			if err := writeWithGeneratedAt(&got, []byte(tc.doc), at); err != nil {
				t.Fatal(err)
			}
			if want := reference(t, tc.want); !bytes.Equal(got.Bytes(), want) {
				t.Errorf("got %s, want %s", got.Bytes(), want)
			}
		}
	}
}

// jsonFormat writes a body from its document only when it has one.
func TestJSONFormat(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	plain := VerdictResponse{Verdict: ledger.Verdict{Verdict: "PASS"}, Fresh: Fresh{at}}
	var b bytes.Buffer
	if err := jsonFormat.Marshal(&b, plain); err != nil {
		t.Fatal(err)
	}
	if want := reference(t, plain); !bytes.Equal(b.Bytes(), want) {
		t.Errorf("without a document: got %s, want %s", b.Bytes(), want)
	}
	b.Reset()
	plain.doc = []byte(`{"x":1}`)
	if err := jsonFormat.Marshal(&b, plain); err != nil {
		t.Fatal(err)
	}
	if want := `{"x":1,"generated_at":"2026-01-02T03:04:05Z"}` + "\n"; b.String() != want {
		t.Errorf("with a document: got %s, want %s", b.Bytes(), want)
	}
}
