package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tlog"
)

// seededKey returns a deterministic key (a 32-byte seed always makes one).
func seededKey(name string) ledger.PrivateKey {
	seed := sha256.Sum256([]byte("proofsite store test key: " + name))
	return must(ledger.NewPrivateKeyFromSeed(seed[:]))
}

func testSigners() ledger.Signers {
	return ledger.Signers{Writer: seededKey("writer"), Witnesses: []ledger.PrivateKey{seededKey("witness-1"), seededKey("witness-2")}}
}

var epoch = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

// history returns n rows; links maps an index to the earlier index it links
// to instead of index−1.
func history(n int, links map[int64]int64) []ledger.HistoryRow {
	rows := make([]ledger.HistoryRow, n)
	for i := range rows {
		rows[i] = ledger.HistoryRow{
			Index: int64(i), Timestamp: ledger.FormatTimestamp(epoch.Add(time.Duration(i) * time.Hour)),
			Kind: "audit", Description: fmt.Sprintf("row %d", i), Payload: []byte(fmt.Sprintf(`{"n":%d}`, i)),
		}
		if i == 0 {
			rows[i].Kind = "genesis"
		}
		if p, ok := links[int64(i)]; ok {
			rows[i].PrevIndex = &p
		}
	}
	return rows
}

// sealedHistory seals the 200-row test history once per test binary.
var sealedHistory = sync.OnceValues(func() ([]ledger.Block, []ledger.Private) {
	blocks, privs, err := ledger.SealHistory(history(200, seamLinks()), testSigners())
	if err != nil {
		panic(err)
	}
	return blocks, privs
})

// testSeams pins the seam of the test history to its row 153.
var testSeams = func() []ledger.Seam {
	blocks, _ := sealedHistory()
	seams, err := ledger.PinSeams([]ledger.Seam{{Block: 153, Reason: "row 152 was superseded; 153 links to 151"}}, blocks)
	if err != nil {
		panic(err)
	}
	return seams
}()

const testOrigin = "store.proofsite.test/ledger"

// testOptions are the pins of the test store.
func testOptions() Options {
	return Options{Keys: testSigners().KeySet(), Seams: testSeams, Log: ledger.LogPin{Origin: testOrigin}}
}

func seamLinks() map[int64]int64 { return map[int64]int64{153: 151} }

// newStore creates a 200-row store with the documented seam and opens it.
func newStore(t testing.TB) (*Store, string, []ledger.Block) {
	t.Helper()
	return newStoreWith(t, testOptions())
}

// newStoreWith is newStore with opts.
func newStoreWith(t testing.TB, opts Options) (*Store, string, []ledger.Block) {
	t.Helper()
	blocks, privs := sealedHistory()
	dir := filepath.Join(t.TempDir(), "ledger")
	if _, err := Create(dir, blocks, privs, opts); err != nil {
		t.Fatal(err)
	}
	st, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dir, blocks
}

func TestCreateOpenRead(t *testing.T) {
	s, _, blocks := newStore(t)
	if s.Count() != 200 || s.Head().Hash() != blocks[199].Hash() || s.Genesis().Hash() != blocks[0].Hash() || s.GenesisHash() != blocks[0].Hash() {
		t.Fatalf("count %d head %d genesis %s", s.Count(), s.Head().Index(), s.Genesis().Hash())
	}
	if _, ok := s.Verdict(); ok {
		t.Fatal("verdict before any full walk")
	}
	b, err := s.BlockByIndex(152)
	if err != nil || b.Hash() != blocks[152].Hash() {
		t.Fatalf("BlockByIndex: %v", err)
	}
	b, err = s.BlockByHash(blocks[77].Hash())
	if err != nil || b.Index() != 77 {
		t.Fatalf("BlockByHash: %v", err)
	}
	if _, err := s.BlockByIndex(200); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing index: %v", err)
	}
	if _, err := s.BlockByHash(ledger.Hash{1}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing hash: %v", err)
	}
	p, err := s.Private(5)
	if err != nil || p.Description != "row 5" || string(p.Payload) != `{"n":5}` {
		t.Fatalf("Private: %+v %v", p, err)
	}
	var got []int64
	for b, err := range s.Range(context.Background(), 150, 155) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b.Index())
	}
	if fmt.Sprint(got) != "[150 151 152 153 154]" {
		t.Fatalf("Range = %v", got)
	}
	if d := s.Day(epoch.Add(50 * time.Hour)); d != 2 {
		t.Fatalf("Day = %d", d)
	}
}

func TestFullWalkAndAppend(t *testing.T) {
	s, dir, _ := newStore(t)
	ctx := context.Background()
	var calls int
	opened := s.Version()
	res, err := s.FullWalk(ctx, nil, func(int64) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if s.Version() <= opened {
		t.Errorf("version %d after a full walk, %d before", s.Version(), opened)
	}
	v := res.Verdict
	if v.Verdict != ledger.VerdictPassWithSeam || *v.StrictTableBreakAtBlock != 153 || v.LastFullWalkAt == nil || calls == 0 {
		t.Fatalf("walk: %+v", v)
	}
	signers := testSigners()
	for i := range 3 {
		before := s.Version()
		b, err := s.AppendEntry(ctx, ledger.Entry{Kind: "inter_node_exchange", Payload: []byte(fmt.Sprintf(`{"i":%d}`, i)), Description: "x"}, signers)
		if err != nil {
			t.Fatal(err)
		}
		if b.Index() != int64(200+i) || s.Version() <= before {
			t.Fatalf("index %d, version %d after an append, %d before", b.Index(), s.Version(), before)
		}
	}
	cached, ok := s.Verdict()
	if !ok || cached.Head.Index != 202 || cached.RowsChecked != 203 || cached.AppendedSinceWalk != 3 || cached.Verdict != ledger.VerdictPassWithSeam ||
		!cached.LastFullWalkAt.Equal(*v.LastFullWalkAt) || s.Count() != 203 {
		t.Fatalf("cached: %+v", cached)
	}
	if tbl, ok := s.StrictTable(); !ok || tbl.Rows != 203 || len(tbl.Breaks) != 1 {
		t.Fatalf("table: %+v", tbl)
	}
	// Reopen: everything acknowledged is there and verifies the same.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	res, err = s2.FullWalk(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict.Verdict != cached.Verdict || *res.Verdict.Head != *cached.Head || s2.Count() != 203 {
		t.Fatalf("after reopen: %+v", res.Verdict)
	}
}

func TestAppendRejects(t *testing.T) {
	s, _, blocks := newStore(t)
	ctx := context.Background()
	signers := testSigners()
	head := s.Head()
	next := func(mutate func(*ledger.Header), sg ledger.Signers) ledger.Block {
		h := ledger.Header{Index: head.Index() + 1, Timestamp: "2026-01-01T00:00:00Z", Kind: "audit", PayloadHash: ledger.Hash{1}, PrevHash: head.Hash()}
		mutate(&h)
		b, err := ledger.Seal(h, sg)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		desc string
		b    ledger.Block
		want error
	}{
		{"replayed block", blocks[10], ledger.ErrBrokenLink},
		{"skips an index", next(func(h *ledger.Header) { h.Index++ }, signers), ledger.ErrBrokenLink},
		{"links to an older block", next(func(h *ledger.Header) { h.PrevHash = blocks[198].Hash() }, signers), ledger.ErrBrokenLink},
		{"unknown writer", next(func(*ledger.Header) {}, ledger.Signers{Writer: seededKey("intruder")}), ledger.ErrUnknownKey},
		{"witness as writer", next(func(*ledger.Header) {}, ledger.Signers{Writer: signers.Witnesses[0]}), ledger.ErrKeyRole},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			err := s.Append(ctx, tc.b, nil)
			if !errors.Is(err, ErrRejected) || !errors.Is(err, tc.want) {
				t.Fatalf("Append error = %v, want %v", err, tc.want)
			}
			if s.Count() != 200 || s.Head().Hash() != head.Hash() {
				t.Fatal("a rejected append changed the store")
			}
		})
	}
	if _, err := s.AppendEntry(ctx, ledger.Entry{Kind: "audit", Payload: []byte(`{"big":9007199254740993}`)}, signers); !errors.Is(err, ledger.ErrIntegerRange) {
		t.Fatalf("inexact payload: %v", err)
	}
	if _, err := s.AppendEntry(ctx, ledger.Entry{Kind: "Not A Kind", Payload: []byte(`{}`)}, signers); !errors.Is(err, ledger.ErrInvalidBlock) {
		t.Fatalf("bad kind: %v", err)
	}
	ok := next(func(*ledger.Header) {}, signers)
	if err := s.Append(ctx, ok, &ledger.Private{Payload: []byte(`{"other":1}`)}); !errors.Is(err, ErrRejected) {
		t.Fatalf("payload mismatch: %v", err)
	}
	if err := s.Append(ctx, ok, nil); err != nil {
		t.Fatal(err)
	}
}

func TestCreateRefuses(t *testing.T) {
	s := testSigners()
	blocks, privs, _ := ledger.SealHistory(history(200, seamLinks()), s)
	dir := filepath.Join(t.TempDir(), "ledger")
	opts := testOptions()
	// An undocumented break: nothing is written.
	if _, err := Create(dir, blocks, privs, Options{Keys: s.KeySet()}); !errors.Is(err, ErrRejected) {
		t.Fatalf("undocumented seam: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 0 {
		t.Fatalf("a failed create left %v", entries)
	}
	if _, err := Open(dir, opts); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("open missing: %v", err)
	}
	if _, err := Create(dir, blocks, privs, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, blocks, privs, opts); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := Open(dir, Options{}); err == nil {
		t.Fatal("opened without pinned keys")
	}
}

// The tamper table, directly on the Badger store. Each case edits stored
// rows behind the store's back (as an attacker with disk access would), then
// reopens the store and runs the full walk proofsite ledger verify runs.
func TestTamperStore(t *testing.T) {
	signers := testSigners()
	attacker := ledger.Signers{Writer: seededKey("attacker")}
	at := func(i int64) *int64 { return &i }
	type want struct {
		verdict   string
		spine     bool
		breakAt   *int64
		checkpont bool // verify with the checkpoint of the untampered chain
	}
	tests := []struct {
		desc   string
		tamper func(t *testing.T, s *Store, blocks []ledger.Block)
		want   want
	}{
		{"untampered", func(*testing.T, *Store, []ledger.Block) {}, want{ledger.VerdictPassWithSeam, true, at(153), true}},
		{"payload_hash changed on a spine row", func(t *testing.T, s *Store, _ []ledger.Block) {
			editRow(t, s, 100, "payload_hash", ledger.Hash{0xab}.String())
		}, want{ledger.VerdictSpineBroken, false, at(100), false}},
		{"timestamp changed on a spine row", func(t *testing.T, s *Store, _ []ledger.Block) {
			editRow(t, s, 100, "timestamp", "2024-01-01T00:00:00Z")
		}, want{ledger.VerdictSpineBroken, false, at(100), false}},
		{"kind changed on a spine row", func(t *testing.T, s *Store, _ []ledger.Block) {
			editRow(t, s, 100, "kind", "gate_decision")
		}, want{ledger.VerdictSpineBroken, false, at(100), false}},
		{"prev_hash changed on a spine row", func(t *testing.T, s *Store, b []ledger.Block) {
			editRow(t, s, 100, "prev_hash", b[98].Hash().String())
		}, want{ledger.VerdictSpineBroken, false, at(100), false}},
		{"off-spine row changed", func(t *testing.T, s *Store, _ []ledger.Block) {
			editRow(t, s, 152, "kind", "audit_forged")
		}, want{ledger.VerdictInvalidRow, true, at(152), false}},
		{"spine row deleted", func(t *testing.T, s *Store, _ []ledger.Block) {
			deleteRow(t, s, 100)
		}, want{ledger.VerdictSpineBroken, false, at(101), false}},
		{"two rows swapped (each stored under the other's index)", func(t *testing.T, s *Store, _ []ledger.Block) {
			a, b := rawRow(t, s, 100), rawRow(t, s, 101)
			putRow(t, s, 100, b)
			putRow(t, s, 101, a)
		}, want{ledger.VerdictSpineBroken, false, at(101), false}},
		{"truncated head: the stored count and tree disagree", func(t *testing.T, s *Store, _ []ledger.Block) {
			deleteRow(t, s, 199)
			deleteRow(t, s, 198)
		}, want{ledger.VerdictStorage, true, at(153), false}},
		{"truncated head with the count rewritten too: caught by the stored tree", func(t *testing.T, s *Store, _ []ledger.Block) {
			deleteRow(t, s, 199)
			putMeta(t, s, metaCount, be64(199))
		}, want{ledger.VerdictStorage, true, at(153), false}},
		{"truncated head against a checkpoint", func(t *testing.T, s *Store, _ []ledger.Block) {
			deleteRow(t, s, 199)
			deleteRow(t, s, 198)
		}, want{ledger.VerdictCheckpoint, true, at(153), true}},
		{"head signed by an unknown key", func(t *testing.T, s *Store, b []ledger.Block) {
			forged, err := ledger.Seal(b[199].Header(), attacker)
			if err != nil {
				t.Fatal(err)
			}
			putRow(t, s, 199, must(forged.MarshalJSON()))
		}, want{ledger.VerdictSpineBroken, false, at(153), false}},
		{"witness signature moved to another block", func(t *testing.T, s *Store, b []ledger.Block) {
			w := b[101].Witnesses()
			w[0] = b[100].Witnesses()[0]
			editRow(t, s, 101, "witnesses", w)
		}, want{ledger.VerdictSpineBroken, false, at(101), false}},
		{"row duplicated under the next key", func(t *testing.T, s *Store, _ []ledger.Block) {
			putRow(t, s, 200, rawRow(t, s, 100))
		}, want{ledger.VerdictInvalidRow, true, at(153), false}},
		{"row moved to another key index", func(t *testing.T, s *Store, _ []ledger.Block) {
			putRow(t, s, 250, rawRow(t, s, 199))
			deleteRow(t, s, 199)
		}, want{ledger.VerdictSpineBroken, false, at(153), false}},
		{"stored payload changed behind its hash", func(t *testing.T, s *Store, _ []ledger.Block) {
			putPrivate(t, s, 100, []byte(`{"description":"row 100","payload":{"n":1000}}`))
		}, want{ledger.VerdictSpineBroken, false, at(100), false}},
		{"off-spine payload changed behind its hash", func(t *testing.T, s *Store, _ []ledger.Block) {
			putPrivate(t, s, 152, []byte(`{"description":"row 152","payload":{"n":1000}}`))
		}, want{ledger.VerdictInvalidRow, true, at(152), false}},
		{"witness signatures stripped", func(t *testing.T, s *Store, _ []ledger.Block) {
			editRow(t, s, 100, "witnesses", []any{})
		}, want{ledger.VerdictSpineBroken, false, at(100), false}},
		{"off-spine row replaced and re-signed, against a checkpoint", func(t *testing.T, s *Store, b []ledger.Block) {
			h := b[152].Header()
			h.Kind = "audit_replaced"
			r, err := ledger.Seal(h, signers)
			if err != nil {
				t.Fatal(err)
			}
			putRow(t, s, 152, must(r.MarshalJSON()))
			putPrivate(t, s, 152, nil) // the replaced payload is not stored
		}, want{ledger.VerdictCheckpoint, true, at(153), true}},
		{"a stored tree node damaged", func(t *testing.T, s *Store, _ []ledger.Block) {
			if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(nodeKey(tlog.BorderNodes(200)[0]), make([]byte, 32)) }); err != nil {
				t.Fatal(err)
			}
		}, want{ledger.VerdictStorage, true, at(153), false}},
		{"new undocumented break, properly signed", func(t *testing.T, s *Store, _ []ledger.Block) {
			links := seamLinks()
			links[181] = 179
			resealed, _, err := ledger.SealHistory(history(200, links), signers)
			if err != nil {
				t.Fatal(err)
			}
			for i := 181; i < 200; i++ {
				putRow(t, s, int64(i), must(resealed[i].MarshalJSON()))
			}
		}, want{ledger.VerdictUndocumentedBreak, true, at(153), false}},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			s, dir, blocks := newStore(t)
			cp := ptr(s.Checkpoint())
			tc.tamper(t, s, blocks)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !tc.want.checkpont {
				cp = nil
			}
			res, err := s.FullWalk(context.Background(), cp, nil)
			if err != nil {
				t.Fatal(err)
			}
			v := res.Verdict
			if v.Verdict != tc.want.verdict || v.CanonicalSpineValid != tc.want.spine ||
				(v.StrictTableBreakAtBlock == nil) != (tc.want.breakAt == nil) ||
				(v.StrictTableBreakAtBlock != nil && *v.StrictTableBreakAtBlock != *tc.want.breakAt) {
				t.Fatalf("verdict %s spine %v break %v failures %q; want %+v", v.Verdict, v.CanonicalSpineValid, v.StrictTableBreakAtBlock, v.Failures, tc.want)
			}
			if !v.CanonicalSpineValid && v.Pass() {
				t.Fatal("passed with a broken spine")
			}
			// Appending to a tampered store never overwrites a stored row.
			before := s.Count()
			if _, err := s.AppendEntry(context.Background(), ledger.Entry{Kind: "audit", Payload: []byte(`{}`)}, signers); err != nil {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrRejected) {
					t.Fatalf("append to a tampered store: %v", err)
				}
				if s.Count() != before {
					t.Fatal("a refused append changed the count")
				}
			}
		})
	}
}

// Test-only access to the stored rows, behind the typed API's back.

func rawRow(t *testing.T, s *Store, i int64) []byte {
	t.Helper()
	var v []byte
	if err := s.db.View(func(txn *badger.Txn) (err error) { v, err = getValue(txn, blockKey(i)); return err }); err != nil {
		t.Fatal(err)
	}
	return v
}

func putRow(t *testing.T, s *Store, i int64, raw []byte) {
	t.Helper()
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(blockKey(i), raw) }); err != nil {
		t.Fatal(err)
	}
}

// putPrivate replaces (or, with nil, deletes) a stored private part.
func putPrivate(t *testing.T, s *Store, i int64, raw []byte) {
	t.Helper()
	err := s.db.Update(func(txn *badger.Txn) error {
		if raw == nil {
			return txn.Delete(privateKey(i))
		}
		return txn.Set(privateKey(i), raw)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func putMeta(t *testing.T, s *Store, key, v []byte) {
	t.Helper()
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(key, v) }); err != nil {
		t.Fatal(err)
	}
}

func deleteRow(t *testing.T, s *Store, i int64) {
	t.Helper()
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(blockKey(i)) }); err != nil {
		t.Fatal(err)
	}
}

// editRow sets one member of a stored row's JSON.
func editRow(t *testing.T, s *Store, i int64, member string, value any) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(rawRow(t, s, i), &m); err != nil {
		t.Fatal(err)
	}
	m[member] = must(json.Marshal(value))
	putRow(t, s, i, must(json.Marshal(m)))
}

func ptr[T any](v T) *T { return &v }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
