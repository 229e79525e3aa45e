package chain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/ledger/store"
)

// Report says what Init did.
type Report struct {
	// Existed: the data folder already held this chain (the same history
	// sealed with the same keys, possibly grown since); nothing changed.
	Existed bool
	// KeysCreated: Init generated the private keys (a first start).
	KeysCreated bool
	Rows        int         // rows imported from the history
	Genesis     ledger.Hash // the hash of block 0
	Verdict     ledger.Verdict
	// Where things are.
	StoreDir, PublicKeys, KeysDir, WitnessDir string
}

// Init imports the published history into a new chain in opts.DataDir,
// signed with the instance's keys (generated on first start), and publishes
// the public keys. It is all or nothing: the chain is verified before it is
// written, staged and renamed into place, and a first start that fails
// removes the keys it generated. On a data folder that already holds a
// chain it is idempotent: the same history sealed with the same keys gives
// the same blocks (ed25519 is deterministic), so a store that begins with
// them is this chain; any other chain is refused, never overwritten.
func Init(ctx context.Context, opts Options, history io.Reader) (_ Report, err error) {
	if err := opts.fill(); err != nil {
		return Report{}, err
	}
	rep := Report{StoreDir: opts.storeDir(), PublicKeys: filepath.Join(opts.DataDir, KeysFile), KeysDir: opts.Keys.Dir, WitnessDir: opts.Keys.WitnessDir}
	rows, err := ledger.ReadHistory(history)
	if err != nil {
		return rep, fmt.Errorf("chain: history: %w", err)
	}
	ks, err := keystore.Open(opts.Keys)
	if errors.Is(err, keystore.ErrNoKeys) {
		ks, err = keystore.Create(opts.Keys)
		rep.KeysCreated = err == nil
	}
	if err != nil {
		return rep, fmt.Errorf("chain: %w", err)
	}
	defer func() {
		if err != nil && rep.KeysCreated {
			ks.Discard() // nothing half-written: the keys of a failed first start go too
		}
	}()
	signers := ks.Signers()
	blocks, privs, err := ledger.SealHistory(rows, signers)
	if err != nil {
		return rep, err
	}
	keys := signers.KeySet()
	rep.Rows, rep.Genesis = len(blocks), blocks[0].Hash()
	sopts := store.Options{Keys: keys, Seams: opts.Seams, Logger: opts.Logger}
	if _, statErr := os.Stat(rep.StoreDir); statErr == nil {
		if err := sameChain(ctx, rep.StoreDir, blocks, privs, sopts); err != nil {
			return rep, err
		}
		rep.Existed = true
		return rep, writeKeysFile(rep.PublicKeys, keys)
	}
	if rep.Verdict, err = store.Create(rep.StoreDir, blocks, privs, sopts); err != nil {
		return rep, err
	}
	if err := writeKeysFile(rep.PublicKeys, keys); err != nil {
		os.RemoveAll(rep.StoreDir)
		return rep, err
	}
	opts.Logger.Info("initialised the chain from the history", "rows", rep.Rows, "genesis", rep.Genesis, "verdict", rep.Verdict.Verdict, "store", rep.StoreDir)
	return rep, nil
}

// sameChain checks that the store in dir begins with blocks and their
// private parts.
func sameChain(ctx context.Context, dir string, blocks []ledger.Block, privs []ledger.Private, opts store.Options) error {
	s, err := store.Open(dir, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	i := 0
	for row, err := range s.Rows(ctx, true) {
		if err != nil {
			return err
		}
		if i == len(blocks) {
			break
		}
		b := row.Block
		if row.Private.Description != privs[i].Description {
			return fmt.Errorf("chain: refusing to overwrite %s: the description of block %d differs from the history", dir, b.Index())
		}
		if b.Hash() != blocks[i].Hash() {
			return fmt.Errorf("chain: refusing to overwrite %s: it holds a different chain (block %d is %s, the history gives %s); move it away to re-initialise",
				dir, b.Index(), b.Hash(), blocks[i].Hash())
		}
		i++
	}
	if i != len(blocks) {
		return fmt.Errorf("chain: refusing to overwrite %s: it holds %d of the %d history rows", dir, i, len(blocks))
	}
	return nil
}

// Bootstrap opens the chain in opts.DataDir, initialising it first from
// the history file when the folder holds none, so that a fresh checkout
// serves with no setup.
func Bootstrap(ctx context.Context, opts Options, historyFile string) (*Chain, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	c, err := Open(opts)
	if !errors.Is(err, store.ErrNotInitialized) {
		return c, err
	}
	opts.Logger.Info("no chain yet: initialising it from the history", "data", opts.DataDir, "history", historyFile)
	f, err := os.Open(historyFile)
	if err != nil {
		return nil, fmt.Errorf("chain: history: %w", err)
	}
	defer f.Close()
	if _, err := Init(ctx, opts, f); err != nil {
		return nil, fmt.Errorf("%s: %w", historyFile, err)
	}
	return Open(opts)
}

// ReadKeysFile reads a published keys file (keys.json form) and checks
// every key. A missing file matches fs.ErrNotExist.
func ReadKeysFile(path string) (ledger.KeySet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ledger.KeySet{}, fmt.Errorf("chain: %w", err)
	}
	if err := ledger.ValidateJSON(data); err != nil {
		return ledger.KeySet{}, fmt.Errorf("chain: %s: %w", path, err)
	}
	var doc ledger.KeysDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		return ledger.KeySet{}, fmt.Errorf("chain: %s: %w", path, err)
	}
	ks, err := ledger.NewKeySet(doc.Keys)
	if err != nil {
		return ledger.KeySet{}, fmt.Errorf("chain: %s: %w", path, err)
	}
	if ks.Len() == 0 {
		return ledger.KeySet{}, fmt.Errorf("chain: %s: no keys", path)
	}
	return ks, nil
}

// PublishedKeys returns the public keys the data folder publishes; the
// error matches fs.ErrNotExist when it holds no chain.
func PublishedKeys(dataDir string) ([]ledger.PublishedKey, error) {
	ks, err := ReadKeysFile(filepath.Join(dataDir, KeysFile))
	if err != nil {
		return nil, err
	}
	return ks.Published(), nil
}

// writeKeysFile publishes the public keys, atomically.
func writeKeysFile(path string, ks ledger.KeySet) error {
	data, err := json.MarshalIndent(ledger.KeysDocument{Keys: ks.Published()}, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("chain: %w", err)
	}
	return nil
}
