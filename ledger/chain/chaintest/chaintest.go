// Package chaintest sets up real chains for tests: a Badger store and
// fresh ed25519 keys, initialised from the project's bundled history
// (content/ledger/history.jsonl, 224 rows). Only tests import it.
package chaintest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
)

// HistorySeams are the seams the bundled history documents.
var HistorySeams = []ledger.Seam{{Block: 153, Reason: "Storage migration."}}

// HistoryFile returns the path of the bundled history.
func HistoryFile() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "content", "ledger", "history.jsonl")
}

// Open initialises a chain from the bundled history with opts (DataDir a
// temporary folder when empty, Seams HistorySeams when nil), opens it and
// closes it when the test ends.
func Open(t testing.TB, opts chain.Options) *chain.Chain {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = filepath.Join(t.TempDir(), "data")
	}
	if opts.Seams == nil {
		opts.Seams = HistorySeams
	}
	h, err := os.Open(HistoryFile())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := chain.Init(context.Background(), opts, h); err != nil {
		t.Fatal(err)
	}
	c, err := chain.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Walked is Open followed by a walk, which verifies the chain and
// publishes its tiles.
func Walked(t testing.TB, opts chain.Options) *chain.Chain {
	t.Helper()
	c := Open(t, opts)
	if _, err := c.Walk(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}
