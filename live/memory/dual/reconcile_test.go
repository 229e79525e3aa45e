package dual

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/proofsite/proofsite/live/memory"

	"github.com/dgraph-io/badger/v4"
)

// TestReconcile damages converged stores one way at a time and checks what
// the reconciler reports, what it repairs (only from the primary), and
// that what it cannot repair stays in Status.
func TestReconcile(t *testing.T) {
	const foreign = "ffffffffffffffffffffffffffffffff"
	// A row nobody's primary holds: a valid memory never stored.
	stray, err := memory.New(draft("case", 99), at)
	if err != nil {
		t.Fatal(err)
	}
	stray.Witness = memory.Witness{BlockIndex: 0}

	tests := []struct {
		desc   string
		damage func(t *testing.T, s *Store, victim memory.Memory)
		// want lists the problems found, in order; repaired says whether
		// each was repaired.
		want     []string
		repaired []bool
	}{
		{desc: "nothing wrong"},
		{
			desc: "SQL row deleted",
			damage: func(t *testing.T, s *Store, v memory.Memory) {
				sqlExec(t, s, "DELETE FROM memories WHERE id = ?", v.ID)
			},
			want: []string{memory.ProblemMissingInSecondary}, repaired: []bool{true},
		},
		{
			desc: "SQL content edited, record_hash left",
			damage: func(t *testing.T, s *Store, v memory.Memory) {
				sqlExec(t, s, `UPDATE memories SET content = '"forged"' WHERE id = ?`, v.ID)
			},
			want: []string{memory.ProblemHashMismatch}, repaired: []bool{true},
		},
		{
			desc: "SQL witness edited with a matching record_hash",
			damage: func(t *testing.T, s *Store, v memory.Memory) {
				v.Witness.BlockIndex = 0
				h, _ := v.Hash()
				sqlExec(t, s, "UPDATE memories SET witness_index = 0, record_hash = ? WHERE id = ?", h.String(), v.ID)
			},
			want: []string{memory.ProblemHashMismatch}, repaired: []bool{true},
		},
		{
			desc: "SQL row this replica never wrote in its primary",
			damage: func(t *testing.T, s *Store, v memory.Memory) {
				insertRow(t, s, stray, s.secondary.origin)
			},
			want: []string{memory.ProblemMissingInPrimary}, repaired: []bool{false},
		},
		{
			desc:   "SQL row of another replica",
			damage: func(t *testing.T, s *Store, v memory.Memory) { insertRow(t, s, stray, foreign) },
		},
		{
			desc: "another replica holds the id with another record",
			damage: func(t *testing.T, s *Store, v memory.Memory) {
				sqlExec(t, s, `UPDATE memories SET content = '"theirs"', origin = ? WHERE id = ?`, foreign, v.ID)
			},
			want: []string{memory.ProblemHashMismatch}, repaired: []bool{false},
		},
		{
			desc: "primary record corrupt",
			damage: func(t *testing.T, s *Store, v memory.Memory) {
				setPrimary(t, s, memoryKey(v.ID), []byte(`{"id":`))
			},
			want: []string{memory.ProblemPrimaryCorrupt}, repaired: []bool{false},
		},
		{
			desc: "primary record names another block",
			damage: func(t *testing.T, s *Store, v memory.Memory) {
				v.Witness.BlockIndex--
				data, _ := v.MarshalJSON()
				setPrimary(t, s, memoryKey(v.ID), data)
			},
			// The SQL row differs too, but a primary record without a
			// valid witness is no source for a repair.
			want: []string{memory.ProblemWitness, memory.ProblemHashMismatch}, repaired: []bool{false, false},
		},
		{
			desc: "primary record names a block the chain does not have",
			damage: func(t *testing.T, s *Store, v memory.Memory) {
				v.Witness.BlockIndex = 1 << 40
				data, _ := v.MarshalJSON()
				setPrimary(t, s, memoryKey(v.ID), data)
				sqlExec(t, s, "DELETE FROM memories WHERE id = ?", v.ID)
			},
			want: []string{memory.ProblemWitness, memory.ProblemMissingInSecondary}, repaired: []bool{false, false},
		},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			e := newEnv(t, Options{})
			s := e.open(t)
			ctx := context.Background()
			var victim memory.Memory
			for i := range 4 {
				st, err := s.Put(ctx, draft("tars", i))
				if err != nil {
					t.Fatal(err)
				}
				if i == 2 {
					victim = st.Memory
				}
			}
			if tc.damage != nil {
				tc.damage(t, s, victim)
			}
			rep, err := s.Reconcile(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var problems []string
			var repaired []bool
			for _, d := range rep.Divergences {
				problems, repaired = append(problems, d.Problem), append(repaired, d.Repaired)
				if d.ID != victim.ID && d.ID != stray.ID {
					t.Errorf("divergence names %s, an undamaged memory", d.ID)
				}
			}
			if !slices.Equal(problems, tc.want) || !slices.Equal(repaired, tc.repaired) {
				t.Fatalf("problems %v repaired %v, want %v %v\n%+v", problems, repaired, tc.want, tc.repaired, rep.Divergences)
			}
			if rep.Memories != 4 {
				t.Fatalf("checked %d memories, want 4", rep.Memories)
			}
			if !slices.Contains(repaired, false) {
				requireConverged(t, s)
				return
			}
			st := s.Status(ctx)
			if st.State != memory.StateDiverged || len(st.DivergentIDs) != 1 {
				t.Fatalf("status: %+v", st)
			}
			// What could not be repaired stays reported, and nothing was
			// copied from the SQL store into the primary.
			again, err := s.Reconcile(ctx)
			if err != nil || again.Unrepaired != rep.Unrepaired {
				t.Fatalf("second reconciliation: %+v %v", again, err)
			}
			if _, err := s.Get(stray.ID); err == nil {
				t.Fatal("the primary took a memory from the SQL store")
			}
		})
	}
}

func sqlExec(t *testing.T, s *Store, q string, args ...any) {
	t.Helper()
	if _, err := s.secondary.db.Exec(s.secondary.d.bind(q), args...); err != nil {
		t.Fatal(err)
	}
}

func insertRow(t *testing.T, s *Store, m memory.Memory, origin string) {
	t.Helper()
	h, err := m.Hash()
	if err != nil {
		t.Fatal(err)
	}
	args := s.secondary.args(m, h)
	args[len(args)-1] = origin
	sqlExec(t, s, "INSERT INTO memories ("+memoryColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", args...)
}

func setPrimary(t *testing.T, s *Store, key, value []byte) {
	t.Helper()
	err := s.primary.db.Update(func(txn *badger.Txn) error { return txn.Set(key, value) })
	if err != nil {
		t.Fatal(err)
	}
}

// TestReconcileSecondaryDown: a reconciliation that cannot read the SQL
// store fails and keeps the previous report.
func TestReconcileSecondaryDown(t *testing.T) {
	e := newEnv(t, Options{})
	s := e.open(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, draft("kipp", 1)); err != nil {
		t.Fatal(err)
	}
	first, err := s.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.secondary.fault = func(op string) error {
		if op == "scan" {
			return errors.New("injected: connection reset")
		}
		return nil
	}
	if _, err := s.Reconcile(ctx); err == nil {
		t.Fatal("Reconcile succeeded without reading the SQL store")
	}
	if st := s.Status(ctx); st.LastReconciliation == nil || !st.LastReconciliation.At.Equal(first.At) {
		t.Fatalf("the previous report was lost: %+v", st.LastReconciliation)
	}
}
