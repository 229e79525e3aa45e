// Package chaintest sets up real chains for tests: a Badger store and
// fresh ed25519 keys, initialised from the project's bundled history
// (content/ledger/history.jsonl, 224 rows). Only tests import it.
package chaintest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
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
//
// Sealing the history (a few hundred signatures) is most of a test
// chain's cost, so a test process seals it once per set of options that
// shape it and copies the sealed folder (store, keys, trust document)
// into each new data folder: every test gets its own real chain on disk,
// and the chains of one test process share their keys. A test that needs
// keys of its own names its key folders (opts.Keys), which seals afresh.
func Open(t testing.TB, opts chain.Options) *chain.Chain {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = filepath.Join(t.TempDir(), "data")
	}
	if opts.Seams == nil {
		opts.Seams = HistorySeams
	}
	if err := initialise(opts); err != nil {
		t.Fatal(err)
	}
	c, err := chain.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// initialise writes the sealed history into opts.DataDir: a copy of the
// process's sealed folder for these options when the keys live inside the
// data folder and no log witness takes part, chain.Init otherwise.
func initialise(opts chain.Options) error {
	if _, err := os.Stat(opts.DataDir); err == nil || opts.Keys.Dir != "" || opts.Keys.WitnessDir != "" || opts.LogWitnesses != nil {
		return initFromHistory(opts)
	}
	key := fmt.Sprintf("%v|%d|%d|%q|%v|%v|%v|%q", opts.Seams, opts.Keys.Witnesses, opts.WitnessQuorum, opts.LogOrigin, opts.BridgeKeys, opts.Genesis, opts.Trust, opts.NodeKeys)
	v, _ := sealed.LoadOrStore(key, sync.OnceValues(func() (map[string]sealedFile, error) { return seal(opts) }))
	files, err := v.(func() (map[string]sealedFile, error))()
	if err != nil {
		return err
	}
	for rel, f := range files {
		path := filepath.Join(opts.DataDir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// sealed holds, per key of the options that shape a sealed history, a
// function returning that history's folder as files.
var sealed sync.Map

// sealedFile is one file of a sealed data folder.
type sealedFile struct {
	data []byte
	mode fs.FileMode
}

// seal initialises a chain with opts in a folder of its own and returns
// the folder's files, by path relative to it; the folder is removed.
func seal(opts chain.Options) (map[string]sealedFile, error) {
	dir, err := os.MkdirTemp("", "chaintest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	opts.DataDir = filepath.Join(dir, "data")
	if err := initFromHistory(opts); err != nil {
		return nil, err
	}
	files := map[string]sealedFile{}
	err = filepath.WalkDir(opts.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(opts.DataDir, path)
		files[rel] = sealedFile{data: data, mode: info.Mode().Perm()}
		return err
	})
	return files, err
}

// initFromHistory runs chain.Init with opts over the bundled history.
func initFromHistory(opts chain.Options) error {
	h, err := os.Open(HistoryFile())
	if err != nil {
		return err
	}
	defer h.Close()
	_, err = chain.Init(context.Background(), opts, h)
	return err
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
