package towns

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/store"
	"github.com/proofsite/proofsite/live/memory"
	"github.com/proofsite/proofsite/live/memory/dual"
)

// testCharter has the five live towns and their nodes, as site.yaml.
func testCharter() *charter.Charter {
	c := &charter.Charter{}
	for _, n := range []struct{ id, designation, name, town string }{
		{"s1", "S1_PLEX", "Plex", "plex"}, {"s2", "S2_CASE", "Case", "case"}, {"s3", "S3_TARS", "TARS", "tars"},
		{"s4", "S4_KIPP", "KIPP", "kipp"}, {"s5", "S5_LOCUS", "Ember", ""}, {"s6", "S6_FORGE", "Forge", "forge"},
	} {
		c.Nodes = append(c.Nodes, charter.Node{ID: n.id, Designation: n.designation, Name: n.name, Kind: "ai", Town: n.town})
		if n.town != "" {
			c.Towns = append(c.Towns, charter.Town{ID: n.town, Node: n.designation, Name: "Town of " + n.name})
		}
	}
	return c
}

// testLedger is a real chain store (Badger, ed25519) holding the project's
// history, with its signers.
type testLedger struct {
	*store.Store
	signers ledger.Signers
}

func (l testLedger) Append(ctx context.Context, e ledger.Entry) (ledger.Block, error) {
	return l.AppendEntry(ctx, e, l.signers)
}

func seededKey(name string) ledger.PrivateKey {
	seed := sha256.Sum256([]byte("proofsite towns test key: " + name))
	k, err := ledger.NewPrivateKeyFromSeed(seed[:])
	if err != nil {
		panic(err)
	}
	return k
}

var testSigners = ledger.Signers{Writer: seededKey("writer"), Witnesses: []ledger.PrivateKey{seededKey("witness-1"), seededKey("witness-2")}}

// history is the project's history, sealed once per test binary.
var history = sync.OnceValues(func() ([]ledger.Block, []ledger.Private) {
	f, err := os.Open("../../content/ledger/history.jsonl")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	rows, err := ledger.ReadHistory(f)
	if err != nil {
		panic(err)
	}
	blocks, privs, err := ledger.SealHistory(rows, testSigners)
	if err != nil {
		panic(err)
	}
	return blocks, privs
})

// createLedger creates the history's chain in dir; history false keeps its
// genesis block only.
func createLedger(t testing.TB, dir string, withHistory bool) {
	t.Helper()
	blocks, privs := history()
	if !withHistory {
		blocks, privs = blocks[:1], privs[:1]
	}
	if _, err := store.Create(dir, blocks, privs, ledgerOptions()); err != nil {
		t.Fatal(err)
	}
}

func ledgerOptions() store.Options {
	blocks, _ := history()
	seams, err := ledger.PinSeams([]ledger.Seam{{Block: 153, Reason: "Storage migration."}}, blocks)
	if err != nil {
		panic(err)
	}
	return store.Options{Keys: testSigners.KeySet(), Seams: seams}
}

func openLedger(t testing.TB, dir string) testLedger {
	t.Helper()
	return openLedgerWith(t, dir, ledgerOptions())
}

// openLedgerWith opens the store in dir with opts.
func openLedgerWith(t testing.TB, dir string, opts store.Options) testLedger {
	t.Helper()
	s, err := store.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return testLedger{Store: s, signers: testSigners}
}

// env is a chain, a memory and a towns store under one folder.
type env struct {
	dir       string
	ledger    testLedger
	memory    *dual.Store
	responder *echo
	clock     *clock
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, ledgerOptions())
}

// newEnvWith is newEnv with the chain opened with opts.
func newEnvWith(t testing.TB, opts store.Options) *env {
	t.Helper()
	dir := t.TempDir()
	createLedger(t, filepath.Join(dir, "ledger"), true)
	e := &env{dir: dir, ledger: openLedgerWith(t, filepath.Join(dir, "ledger"), opts), responder: &echo{}, clock: &clock{now: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}}
	m, err := dual.Open(context.Background(), filepath.Join(dir, "memory"), dual.Options{Chain: e.ledger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e.memory = m
	return e
}

// open opens the towns store of e; it is closed when the test ends.
func (e *env) open(t testing.TB) *Towns {
	t.Helper()
	tw, err := Open(context.Background(), filepath.Join(e.dir, "towns"), Options{Charter: testCharter(), Chain: e.ledger, Memory: e.memory,
		Responder: e.responder, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tw.Close() })
	return tw
}

// echo is a small Responder for this package's tests (the real providers
// are live/ai's, tested there and through the routes): it answers with what
// it was given, and keeps the last call.
type echo struct {
	mu              sync.Mutex
	calls           int
	node, msg, from string
	memory          []string
	fail            error
}

func (r *echo) Reply(_ context.Context, designation string, q Question) (Reply, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	r.node, r.msg, r.from, r.memory = designation, q.Message, q.From, q.Memory
	if r.fail != nil {
		return Reply{}, r.fail
	}
	return Reply{Node: designation, Provider: "offline", Model: "echo", Text: fmt.Sprintf("%s heard %q with %d memories", designation, q.Message, len(q.Memory))}, nil
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// remember stores a memory of node in e's memory store.
func (e *env) remember(t testing.TB, node, content string) {
	t.Helper()
	if _, err := e.memory.Put(context.Background(), memory.Draft{NodeID: node, Content: []byte(content)}); err != nil {
		t.Fatal(err)
	}
}

// historyWalls counts the history's wall signatures per town.
func historyWalls() map[string]int64 {
	out := map[string]int64{}
	_, privs := history()
	blocks, _ := history()
	for i, b := range blocks {
		if b.Header().Kind == KindWallSignature {
			for _, town := range []string{"case", "tars", "plex", "kipp", "forge"} {
				if strings.Contains(string(privs[i].Payload), `"town":"`+town+`"`) {
					out[town]++
				}
			}
		}
	}
	return out
}
