package dual

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/proofsite/proofsite/live/memory"
)

// TestConvergesUnderRandomFailures is a property test over seeded random
// interleavings of Puts (new and retried), replications, reconciliations,
// reopenings, lost outbox acknowledgements, lost SQL rows and SQL calls
// failing at random points (before a write, inside a transaction before
// its commit, during a scan). Whatever the interleaving:
//
//   - a Put that returned nil has its memory in both stores at once;
//   - a Put that failed its SQL write has its memory in the primary;
//   - once the SQL store answers again, one reconciliation makes both
//     stores hold the same records, empties the outbox, leaves nothing
//     unrepaired, and every memory's witness checks out against the chain.
//
// A failing seed is printed; rerun it with -run 'TestConvergesUnderRandomFailures/seed=N'.
func TestConvergesUnderRandomFailures(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			convergesAfter(t, seed, 50)
		})
	}
}

func convergesAfter(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 0x6d656d6f7279))
	e := newEnv(t, Options{})
	s := e.open(t)
	ctx := context.Background()
	failRate := 0.15 + 0.5*rng.Float64()
	outage := false
	injected := errors.New("injected SQL failure")
	install := func(s *Store) {
		s.secondary.fault = func(op string) error {
			if outage || rng.Float64() < failRate {
				return fmt.Errorf("%w in %s", injected, op)
			}
			return nil
		}
	}
	install(s)
	// inBoth fails t unless id is in both stores (read without faults).
	inBoth := func(id string) {
		t.Helper()
		f := s.secondary.fault
		s.secondary.fault = nil
		defer func() { s.secondary.fault = f }()
		if _, err := s.Get(id); err != nil {
			t.Fatalf("step: acknowledged %s not in the primary: %v", id, err)
		}
		if h, err := s.secondary.hash(ctx, id); err != nil || h.IsZero() {
			t.Fatalf("acknowledged %s not in the SQL store: %v", id, err)
		}
	}

	var drafts []memory.Draft
	put := func(d memory.Draft) {
		st, err := s.Put(ctx, d)
		switch {
		case err == nil:
			inBoth(st.Memory.ID)
		case errors.Is(err, injected):
			requireSecondaryWriteError(t, err)
			if _, err := s.Get(st.Memory.ID); err != nil {
				t.Fatalf("a Put whose SQL write failed left nothing in the primary: %v", err)
			}
		default:
			t.Fatalf("Put: %v", err)
		}
	}
	for step := range steps {
		switch r := rng.IntN(100); {
		case r < 40 || len(drafts) == 0:
			d := draft([]string{"case", "tars", "plex"}[rng.IntN(3)], step)
			drafts = append(drafts, d)
			put(d)
		case r < 55:
			put(drafts[rng.IntN(len(drafts))])
		case r < 65:
			if _, err := s.Replicate(ctx); err != nil && !errors.Is(err, injected) {
				t.Fatal(err)
			}
		case r < 75:
			if _, err := s.Reconcile(ctx); err != nil && !errors.Is(err, injected) {
				t.Fatal(err)
			}
		case r < 83: // a lost acknowledgement: the entry comes back
			if m, err := memory.New(drafts[rng.IntN(len(drafts))], at); err == nil {
				if _, err := s.Get(m.ID); err == nil {
					reenqueue(t, s, m.ID)
				}
			}
		case r < 88: // the SQL store loses a row
			if m, err := memory.New(drafts[rng.IntN(len(drafts))], at); err == nil {
				sqlExec(t, s, "DELETE FROM memories WHERE id = ?", m.ID)
			}
		case r < 95:
			outage = !outage
		default: // restart
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = e.open(t)
			install(s)
		}
	}

	rate := failRate
	outage, failRate = false, 0
	rep, err := s.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unrepaired != 0 {
		t.Fatalf("unrepaired after recovery: %+v", rep.Divergences)
	}
	requireConverged(t, s)
	for _, d := range drafts {
		m, _ := memory.New(d, at)
		if _, err := s.Get(m.ID); err != nil {
			t.Fatalf("memory of a Put that reached the primary is gone: %v", err)
		}
	}
	t.Logf("fail rate %.2f: %d memories, reconciliation repaired %d and replicated %d", rate, s.primary.count.Load(), rep.Repaired, rep.Replicated)
}
