package dual

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/proofsite/proofsite/live/memory"
)

// TestPostgresReplicasShareOneDatabase runs two replicas (two primaries)
// against one PostgreSQL schema, with one chain writer as ARCHITECTURE 5b
// has it. Each reconciles its own memories without flagging the other's
// rows; the same memory stored on both is a conflict that is reported,
// never overwritten, and not repaired by the replica that did not write
// the row.
func TestPostgresReplicasShareOneDatabase(t *testing.T) {
	opts := postgresOptions(t)
	e := newEnv(t, opts)
	a := e.open(t)
	bOpts := e.opts
	b, err := Open(context.Background(), filepath.Join(e.dir, "memory-b"), bOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if a.secondary.origin == b.secondary.origin {
		t.Fatal("two primaries drew the same origin")
	}
	ctx := context.Background()
	for i := range 3 {
		if _, err := a.Put(ctx, draft("case", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Put(ctx, draft("tars", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*Store{a, b} {
		rep, err := s.Reconcile(ctx)
		if err != nil || rep.Memories != 3 || len(rep.Divergences) != 0 {
			t.Fatalf("Reconcile: %+v %v", rep, err)
		}
		requireConverged(t, s)
	}

	// Replica b stores what a already stored: its own witness, so another
	// record under the same id.
	shared, err := a.Put(ctx, draft("kipp", 1))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Put(ctx, draft("kipp", 1))
	if requireSecondaryWriteError(t, err); !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("second replica's Put = %v, want memory.ErrConflict", err)
	}
	rep, err := b.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unrepaired != 1 || rep.Divergences[0].ID != shared.Memory.ID || rep.Divergences[0].Problem != memory.ProblemHashMismatch {
		t.Fatalf("b's report: %+v", rep)
	}
	// a's row is intact.
	if _, err := a.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	requireConverged(t, a)
	if st := b.Status(ctx); st.State != memory.StateDiverged || st.DivergentIDs[0] != shared.Memory.ID {
		t.Fatalf("b's status: %+v", st)
	}
}
