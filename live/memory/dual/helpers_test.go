package dual

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/store"
	"github.com/proofsite/proofsite/live/memory"
	"github.com/proofsite/proofsite/live/memory/pgtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var at = time.Date(2025, 1, 6, 9, 0, 0, 123456789, time.UTC)

// pg is the PostgreSQL server of this test binary, started by the first
// test that needs it.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Close()
	os.Exit(code)
}

// testChain is a real ledger store (Badger, ed25519) behind the Chain
// interface, as cmd wires it.
type testChain struct {
	*store.Store
	signers ledger.Signers
}

var _ Chain = testChain{}

func (c testChain) Append(ctx context.Context, e ledger.Entry) (ledger.Block, error) {
	return c.AppendEntry(ctx, e, c.signers)
}

func seededKey(name string) ledger.PrivateKey {
	seed := sha256.Sum256([]byte("proofsite memory test key: " + name))
	k, err := ledger.NewPrivateKeyFromSeed(seed[:])
	if err != nil {
		panic(err)
	}
	return k
}

func testSigners() ledger.Signers {
	return ledger.Signers{Writer: seededKey("writer"), Witnesses: []ledger.PrivateKey{seededKey("witness-1"), seededKey("witness-2")}}
}

// createChain makes a chain holding only its genesis block in dir.
func createChain(t testing.TB, dir string) {
	t.Helper()
	rows := []ledger.HistoryRow{{Index: 0, Timestamp: "2025-01-06T09:00:00Z", Kind: "genesis", Description: "genesis", Payload: []byte(`{"n":0}`)}}
	blocks, privs, err := ledger.SealHistory(rows, testSigners())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(dir, blocks, privs, store.Options{Keys: testSigners().KeySet()}); err != nil {
		t.Fatal(err)
	}
}

// openChain opens the chain in dir and closes it when the test ends.
func openChain(t testing.TB, dir string) testChain {
	t.Helper()
	s, err := store.Open(dir, store.Options{Keys: testSigners().KeySet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return testChain{Store: s, signers: testSigners()}
}

// env is a chain and a memory directory in a temporary directory.
type env struct {
	dir   string
	chain testChain
	opts  Options
}

// newEnv creates a chain; opts.PostgresDSN selects PostgreSQL.
func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	dir := t.TempDir()
	createChain(t, filepath.Join(dir, "ledger"))
	e := &env{dir: dir, chain: openChain(t, filepath.Join(dir, "ledger")), opts: opts}
	e.opts.Chain = e.chain
	return e
}

// open opens the memory store of e; it is closed when the test ends.
func (e *env) open(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(e.dir, "memory"), e.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// postgresOptions returns Options on a fresh schema of the shared server.
func postgresOptions(t testing.TB) Options {
	return Options{PostgresDSN: pg.Get(t).NewSchema(t)}
}

// draft returns a draft of node with a JSON object naming n.
func draft(node string, n int) memory.Draft {
	return memory.Draft{NodeID: node, Content: json.RawMessage(fmt.Sprintf(`{"note":"memory %d","n":%d}`, n, n))}
}

// snapshot is what both stores hold: id -> record hash.
type snapshot map[string]ledger.Hash

func primarySnapshot(t testing.TB, s *Store) snapshot {
	t.Helper()
	out := snapshot{}
	err := s.primary.scan(context.Background(), func(id string, m memory.Memory, err error) error {
		if err != nil {
			return err
		}
		h, err := m.Hash()
		out[id] = h
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// secondarySnapshot holds the rows this replica wrote.
func secondarySnapshot(t testing.TB, s *Store) snapshot {
	t.Helper()
	out := snapshot{}
	for r, err := range s.secondary.rows(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if r.origin == s.secondary.origin {
			out[r.id] = r.hash
		}
	}
	return out
}

// requireConverged fails t unless both stores hold the same records, the
// outbox is empty, every memory's witness checks out against the chain,
// and Status says in_sync.
func requireConverged(t testing.TB, s *Store) {
	t.Helper()
	p, q := primarySnapshot(t, s), secondarySnapshot(t, s)
	if len(p) != len(q) {
		t.Fatalf("primary holds %d memories, secondary %d", len(p), len(q))
	}
	for id, h := range p {
		if q[id] != h {
			t.Fatalf("memory %s: primary %s, secondary %s", id, h, q[id])
		}
		m, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.checkWitness(m); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Status(context.Background())
	if st.State != memory.StateInSync || st.OutboxBacklog != 0 || len(st.DivergentIDs) != 0 {
		t.Fatalf("status after convergence: %+v", st)
	}
	if *st.Primary.Memories != int64(len(p)) || *st.Secondary.Memories != int64(len(q)) {
		t.Fatalf("status counts %d/%d, stores hold %d", *st.Primary.Memories, *st.Secondary.Memories, len(p))
	}
}

// ids returns the ids of ms in order.
func ids(ms []memory.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// steppingClock returns a clock that starts at a fixed time and advances
// by one millisecond per call.
func steppingClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// sortedKeys returns the keys of snap in order.
func sortedKeys(snap snapshot) []string {
	out := make([]string, 0, len(snap))
	for id := range snap {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
