package live

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
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
		if want := reference(t, ChainStatus{ChainState: statusOracle(chain, at), Fresh: Fresh{at}}); !bytes.Equal(body, want) {
			t.Errorf("status:\n got %s\nwant %s", body, want)
		}
	}
}

// statusOracle is the chain status read straight from the chain, as the
// handler computed it before it was memoised.
func statusOracle(c Chain, now time.Time) ChainState {
	st := ChainState{Status: "verifying", Day: c.Day(now), Head: blockRef(c.Head()), Genesis: blockRef(c.Genesis()),
		Blocks: c.Count(), Keys: c.Keys().Published()}
	if v, ok := c.Verdict(); ok {
		st.Status = "failing"
		if v.Pass() {
			st.Status = "ok"
		}
		st.CanonicalSpineValid, st.Verdict, st.Checkpoint, st.LastFullWalkAt = &v.CanonicalSpineValid, v.Verdict, v.Checkpoint, v.LastFullWalkAt
	}
	return st
}

// changingChain is the real store with a verdict, head and count the test
// replaces, as an append or a full walk would.
type changingChain struct {
	Chain
	verdict ledger.Verdict
	head    ledger.Block
	count   int64
}

func (c *changingChain) Verdict() (ledger.Verdict, bool) { return c.verdict, true }
func (c *changingChain) Head() ledger.Block              { return c.head }
func (c *changingChain) Count() int64                    { return c.count }

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
	next.Checkpoint = &ledger.Checkpoint{Size: v.Checkpoint.Size + 1, HeadHash: ledger.Hash{1}}
	next.Verdict = "FAIL"
	chain.verdict = next
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
		{"nothing", func() {}},
	} {
		change.do()
		_, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, "/api/chain/status", nil))
		at := generatedAt(t, body)
		if want := reference(t, ChainStatus{ChainState: statusOracle(chain, at), Fresh: Fresh{at}}); !bytes.Equal(body, want) {
			t.Errorf("after a change of %s:\n got %s\nwant %s", change.desc, body, want)
		}
	}
}

func TestJSONMemo(t *testing.T) {
	type doc struct {
		Name  string   `json:"name"`
		Tags  []string `json:"tags"`
		Count *int64   `json:"count"`
		HTML  string   `json:"html"`
	}
	var m jsonMemo[doc, doc]
	builds := 0
	build := func(d doc) doc { builds++; return d }
	n := int64(3)
	d := doc{Name: "a", Tags: []string{"x"}, Count: &n, HTML: "<b>&</b>"}
	_, first, err := m.get(d, build)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"a","tags":["x"],"count":3,"html":"<b>&</b>"}`; string(first) != want {
		t.Errorf("got %s, want %s (huma does not escape HTML)", first, want)
	}
	same := d
	same.Tags = []string{"x"} // equal, not identical
	if _, again, _ := m.get(same, build); &again[0] != &first[0] || builds != 1 {
		t.Errorf("an equal key was built %d times and encoded again", builds)
	}
	m2 := int64(4)
	for _, changed := range []doc{
		{Name: "b", Tags: []string{"x"}, Count: &n, HTML: d.HTML},
		{Name: "a", Tags: []string{"x", "y"}, Count: &n, HTML: d.HTML},
		{Name: "a", Tags: []string{"x"}, Count: &m2, HTML: d.HTML},
		{Name: "a", Tags: []string{"x"}, HTML: d.HTML},
	} {
		got, enc, _ := m.get(changed, build)
		if want := reference(t, changed); !bytes.Equal(append(enc, '\n'), want) || got.Name != changed.Name {
			t.Errorf("after a change: got %s, want %s", enc, want)
		}
	}
	if builds != 5 {
		t.Errorf("%d builds for 5 different keys", builds)
	}
}

// The status is built from its inputs only when they change.
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

func TestEqualValues(t *testing.T) {
	type inner struct {
		N    int64
		Hash [4]byte
	}
	type doc struct {
		S     string
		B     bool
		F     float64
		U     uint8
		P     *inner
		L     []inner
		Bytes []byte
		M     map[string]int
		I     any
		T     time.Time
		Arr   [2]string

		hidden map[string][]int
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	base := func() doc {
		return doc{S: "s", B: true, F: 1.5, U: 7, P: &inner{1, [4]byte{1, 2}}, L: []inner{{2, [4]byte{3}}}, Bytes: []byte("ab"),
			M: map[string]int{"a": 1}, I: inner{3, [4]byte{}}, T: at, Arr: [2]string{"x", "y"}, hidden: map[string][]int{"k": {1}}}
	}
	tests := []struct {
		desc   string
		change func(*doc)
		equal  bool
	}{
		{"equal content, other memory", func(*doc) {}, true},
		{"string", func(d *doc) { d.S = "t" }, false},
		{"bool", func(d *doc) { d.B = false }, false},
		{"float", func(d *doc) { d.F = 2 }, false},
		{"uint", func(d *doc) { d.U = 8 }, false},
		{"pointee", func(d *doc) { d.P.N = 9 }, false},
		{"byte array in a pointee", func(d *doc) { d.P.Hash[3] = 1 }, false},
		{"nil pointer", func(d *doc) { d.P = nil }, false},
		{"slice element", func(d *doc) { d.L[0].N = 9 }, false},
		{"slice length", func(d *doc) { d.L = append(d.L, inner{}) }, false},
		{"nil slice against empty", func(d *doc) { d.L = nil }, false},
		{"bytes", func(d *doc) { d.Bytes[1] = 'c' }, false},
		{"map value", func(d *doc) { d.M["a"] = 2 }, false},
		{"map key", func(d *doc) { d.M = map[string]int{"b": 1} }, false},
		{"interface value", func(d *doc) { d.I = inner{4, [4]byte{}} }, false},
		{"interface type", func(d *doc) { d.I = "x" }, false},
		{"nil interface", func(d *doc) { d.I = nil }, false},
		{"time", func(d *doc) { d.T = at.Add(1) }, false},
		{"array", func(d *doc) { d.Arr[1] = "z" }, false},
		{"unexported map", func(d *doc) { d.hidden = map[string][]int{"k": {2}} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			a, b := base(), base()
			tc.change(&b)
			if got := equalValues(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem(), 0); got != tc.equal {
				t.Errorf("equalValues = %v, want %v", got, tc.equal)
			}
			if got := equalValues(reflect.ValueOf(&b).Elem(), reflect.ValueOf(&a).Elem(), 0); got != tc.equal {
				t.Errorf("equalValues, swapped = %v, want %v", got, tc.equal)
			}
		})
	}
	// Shared memory is equal without being read; so is a value with itself.
	a := base()
	b := a
	if !equalValues(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem(), 0) {
		t.Error("a copy sharing all memory is not equal")
	}
	// Too deep counts as different (the memo then encodes again).
	type node struct{ Next *node }
	deep1, deep2 := &node{}, &node{}
	for range maxEqualDepth {
		deep1, deep2 = &node{deep1}, &node{deep2}
	}
	if equalValues(reflect.ValueOf(deep1).Elem(), reflect.ValueOf(deep2).Elem(), 0) {
		t.Error("a value past maxEqualDepth counted as equal")
	}
}
