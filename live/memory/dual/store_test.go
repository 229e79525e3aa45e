package dual

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/internal/golden"
	"github.com/proofsite/proofsite/live/memory"
)

// backends runs f once with SQLite and once with PostgreSQL.
func backends(t *testing.T, f func(t *testing.T, opts Options)) {
	t.Run(BackendSQLite, func(t *testing.T) { f(t, Options{}) })
	t.Run(BackendPostgres, func(t *testing.T) { f(t, postgresOptions(t)) })
}

func TestPutGetRetrieve(t *testing.T) {
	backends(t, func(t *testing.T, opts Options) {
		opts.Nodes, opts.Now = []string{"case", "tars"}, steppingClock()
		e := newEnv(t, opts)
		s := e.open(t)
		ctx := context.Background()
		head := e.chain.Count()

		var stored []memory.Memory
		for i := range 5 {
			node := []string{"case", "tars"}[i%2]
			st, err := s.Put(ctx, draft(node, i))
			if err != nil {
				t.Fatal(err)
			}
			if !st.Created || st.Memory.NodeID != node {
				t.Fatalf("Put %d: %+v", i, st)
			}
			stored = append(stored, st.Memory)
		}
		if got := e.chain.Count(); got != head+5 {
			t.Fatalf("chain grew by %d blocks, want 5", got-head)
		}
		// Every memory names its own block, which commits to it.
		for _, m := range stored {
			b, err := e.chain.BlockByIndex(m.Witness.BlockIndex)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.CheckWitness(b); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(m.ID)
			if err != nil || got.ID != m.ID || got.Witness != m.Witness {
				t.Fatalf("Get(%s) = %+v, %v", m.ID, got, err)
			}
		}

		got, err := s.Retrieve(ctx, "case", 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{stored[4].ID, stored[2].ID, stored[0].ID} // newest first
		if !slices.Equal(ids(got), want) {
			t.Fatalf("Retrieve(case) = %v, want %v", ids(got), want)
		}
		if got, _ := s.Retrieve(ctx, "case", 2); len(got) != 2 || got[0].ID != stored[4].ID {
			t.Fatalf("Retrieve(case, 2) = %v", ids(got))
		}
		if _, err := s.Retrieve(ctx, "plex", 0); !errors.Is(err, memory.ErrUnknownNode) {
			t.Fatalf("Retrieve(plex) = %v, want memory.ErrUnknownNode", err)
		}
		if _, err := s.Put(ctx, draft("plex", 9)); !errors.Is(err, memory.ErrUnknownNode) {
			t.Fatalf("Put(plex) = %v, want memory.ErrUnknownNode", err)
		}
		if _, err := s.Get("nope"); !errors.Is(err, memory.ErrNotFound) {
			t.Fatalf("Get(nope) = %v", err)
		}
		requireConverged(t, s)
	})
}

// TestPutAgainIsIdempotent stores the same node and content twice: the
// second Put returns the first memory, writes no block, no row.
func TestPutAgainIsIdempotent(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.open(t)
	ctx := context.Background()
	first, err := s.Put(ctx, draft("case", 1))
	if err != nil {
		t.Fatal(err)
	}
	head := e.chain.Count()
	again, err := s.Put(ctx, memory.Draft{NodeID: "case", Content: json.RawMessage(`{ "n": 1, "note": "memory 1" }`)})
	if err != nil {
		t.Fatal(err)
	}
	if again.Created || again.Memory.ID != first.Memory.ID || again.Memory.Witness != first.Memory.Witness {
		t.Fatalf("second Put: %+v, first %+v", again, first)
	}
	if e.chain.Count() != head {
		t.Fatal("the second Put appended a block")
	}
	requireConverged(t, s)
}

// TestReopen closes and reopens the store: memories, the count and the
// last reconciliation survive.
func TestReopen(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.open(t)
	ctx := context.Background()
	for i := range 3 {
		if _, err := s.Put(ctx, draft("kipp", i)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := s.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories != 3 || len(rep.Divergences) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, draft("kipp", 9)); !errors.Is(err, memory.ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
	s = e.open(t)
	st := s.Status(ctx)
	if *st.Primary.Memories != 3 || st.LastReconciliation == nil || !st.LastReconciliation.At.Equal(rep.At) {
		t.Fatalf("status after reopen: %+v", st)
	}
	requireConverged(t, s)
}

// TestMigrations opens the same SQLite file twice (the schema is made
// once) and refuses a schema newer than the program.
func TestMigrations(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.open(t)
	var versions int
	if err := s.secondary.db.QueryRow("SELECT count(*) FROM memory_schema").Scan(&versions); err != nil || versions != len(migrations) {
		t.Fatalf("memory_schema rows = %d, %v", versions, err)
	}
	if _, err := s.secondary.db.Exec("INSERT INTO memory_schema (version, applied_at) VALUES (99, 'later')"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(context.Background(), filepath.Join(e.dir, "memory"), e.opts)
	if !errors.Is(err, memory.ErrSchemaNewer) {
		t.Fatalf("Open of a newer schema = %v, want memory.ErrSchemaNewer", err)
	}
}

func TestOptionsRefused(t *testing.T) {
	e := newEnv(t, Options{})
	dir := filepath.Join(e.dir, "memory")
	ctx := context.Background()
	for name, opts := range map[string]Options{
		"no chain":      {},
		"bad roster":    {Chain: e.chain, Nodes: []string{"Case"}},
		"sqlite path ?": {Chain: e.chain, SQLitePath: filepath.Join(e.dir, "a?b")},
		"malformed DSN": {Chain: e.chain, PostgresDSN: "host=localhost port=notaport"},
	} {
		if s, err := Open(ctx, dir, opts); err == nil {
			s.Close()
			t.Errorf("%s: opened", name)
		}
	}
}

// TestWitnessFailure: a chain append that fails writes nothing.
func TestWitnessFailure(t *testing.T) {
	e := newEnv(t, Options{})
	e.opts.Chain = failingChain{e.chain}
	s := e.open(t)
	_, err := s.Put(context.Background(), draft("case", 1))
	var we *memory.WriteError
	if !errors.As(err, &we) || we.Write != memory.WriteChain || !errors.Is(err, memory.ErrWriteFailed) {
		t.Fatalf("Put = %v, want a chain memory.WriteError", err)
	}
	if n := s.primary.count.Load(); n != 0 {
		t.Fatalf("primary holds %d memories after a failed witness", n)
	}
	requireConverged(t, s)
}

// failingChain refuses appends (a chain whose disk is full, say) and reads
// blocks from the real chain.
type failingChain struct{ testChain }

func (failingChain) Append(context.Context, ledger.Entry) (ledger.Block, error) {
	return ledger.Block{}, errors.New("chain: disk full")
}

// TestSQLiteSettings reads back the settings every SQLite connection gets.
func TestSQLiteSettings(t *testing.T) {
	s := newEnv(t, Options{SecondaryTimeout: 1500 * time.Millisecond}).open(t)
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "1500"} {
		var got string
		if err := s.secondary.db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q, %v; want %q", pragma, got, err, want)
		}
	}
}

// TestStatusGolden pins the JSON of Status (the body of GET
// /api/memory/status) for a store with one memory waiting in the outbox.
func TestStatusGolden(t *testing.T) {
	s := newEnv(t, Options{Now: steppingClock()}).open(t)
	ctx := context.Background()
	for i := range 2 {
		if _, err := s.Put(ctx, draft("case", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	s.secondary.fault = func(op string) error {
		if op == "put" {
			return errors.New("injected")
		}
		return nil
	}
	if _, err := s.Put(ctx, draft("case", 2)); err == nil {
		t.Fatal("Put succeeded")
	}
	got, err := json.MarshalIndent(s.Status(ctx), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, *update, "status.golden", append(got, '\n'))
}
