package store

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tlog"
)

// The store keeps the Merkle tree on append, persists it, signs checkpoints
// that outside verifiers accept, and proves inclusion and consistency.
func TestTreeCheckpointsAndProofs(t *testing.T) {
	s, dir, blocks := newStore(t)
	ctx := context.Background()
	if _, ok := s.SpineHead(); ok {
		t.Fatal("spine head before any walk")
	}
	res, err := s.FullWalk(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := s.Checkpoint()
	if *res.Verdict.Checkpoint != first || first.Size != 200 || first.Origin != testOrigin {
		t.Fatalf("walk checkpoint %+v, store %+v", res.Verdict.Checkpoint, first)
	}
	signers := testSigners()
	for i := range 5 {
		if _, err := s.AppendEntry(ctx, ledger.Entry{Kind: "audit", Payload: fmt.Appendf(nil, `{"i":%d}`, i)}, signers); err != nil {
			t.Fatal(err)
		}
	}
	head, ok := s.SpineHead()
	if !ok || head.Index != 204 || head.Hash != s.Head().Hash() {
		t.Fatalf("spine head %+v", head)
	}
	cp := s.Checkpoint()
	v, _ := s.Verdict()
	if *v.Checkpoint != cp || cp.Size != 205 {
		t.Fatalf("verdict checkpoint %+v, store %+v", v.Checkpoint, cp)
	}
	note, err := s.SignedCheckpoint(signers.Writer)
	if err != nil {
		t.Fatal(err)
	}
	key, err := tlog.VerifierKey(testOrigin, signers.Writer.Public().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	opened, err := ledger.OpenCheckpoint(note, key)
	if err != nil || opened != cp {
		t.Fatalf("signed checkpoint %+v %v", opened, err)
	}
	// The first checkpoint is a prefix of the new one, and every row is in it.
	p, err := s.ConsistencyProof(first.Size, cp.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.VerifyConsistency(uint64(first.Size), uint64(cp.Size), p, tlog.Hash(first.Root), tlog.Hash(cp.Root)); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int64{0, 152, 153, 204} {
		p, err := s.InclusionProof(i, cp.Size)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := s.BlockByIndex(i)
		if err := tlog.VerifyInclusion(tlog.LeafHash(b.Leaf()), uint64(i), uint64(cp.Size), p, tlog.Hash(cp.Root)); err != nil {
			t.Fatalf("inclusion of %d: %v", i, err)
		}
	}
	if _, err := s.InclusionProof(205, 205); !errors.Is(err, ErrNotFound) {
		t.Fatalf("proof beyond the tree: %v", err)
	}
	if _, err := s.ConsistencyProof(10, 300); !errors.Is(err, ErrNotFound) {
		t.Fatalf("proof beyond the tree: %v", err)
	}
	if blocks[0].Hash() != s.GenesisHash() {
		t.Fatal("genesis")
	}

	// Reopened, the tree comes from the stored border nodes.
	s.Close()
	s, err = Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s.Checkpoint() != cp {
		t.Fatalf("reopened checkpoint %+v, want %+v", s.Checkpoint(), cp)
	}
	// A store written before the tree existed gets it built once at open.
	err = s.db.DropPrefix(prefixNode)
	if err == nil {
		err = s.db.Update(func(txn *badger.Txn) error { return txn.Delete(metaTreeSize) })
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Checkpoint() != cp {
		t.Fatalf("rebuilt checkpoint %+v, want %+v", s.Checkpoint(), cp)
	}
	if res, err := s.FullWalk(ctx, &first, nil); err != nil || res.Verdict.Verdict != ledger.VerdictPassWithSeam {
		t.Fatalf("walk after the rebuild: %+v %v", res.Verdict.Failures, err)
	}
}

// A block below the witness quorum is never appended.
func TestAppendBelowQuorum(t *testing.T) {
	s, _, _ := newStore(t)
	signers := testSigners()
	one := ledger.Signers{Writer: signers.Writer, Witnesses: signers.Witnesses[:1]}
	_, err := s.AppendEntry(context.Background(), ledger.Entry{Kind: "audit", Payload: []byte(`{}`)}, one)
	if !errors.Is(err, ErrRejected) || !errors.Is(err, ledger.ErrWitnessQuorum) {
		t.Fatalf("append with one witness: %v", err)
	}
}
