package chain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	// TrustPublished: Init wrote the trust document, new or changed
	// (with Existed: it was out of date).
	TrustPublished bool
	Rows           int         // rows imported from the history
	Genesis        ledger.Hash // the hash of block 0
	Verdict        ledger.Verdict
	// Where things are.
	StoreDir, PublicKeys, KeysDir, WitnessDir string
}

// Init imports the published history into a new chain in opts.DataDir,
// signed with the instance's keys (generated on first start), and publishes
// the trust document (keys.json): the public keys with the Bridge keys, the
// genesis, the documented seams pinned to the rows just sealed, the witness
// quorum and the log. It is all or nothing: the chain is verified before
// it is written, staged and renamed into place, and a first start that
// fails removes the keys it generated. On a data folder that already holds
// a chain it is idempotent: the same history sealed with the same keys
// gives the same blocks (ed25519 is deterministic), so a store that begins
// with them is this chain; any other chain is refused, never overwritten.
// The trust document is then written again if it changed.
func Init(ctx context.Context, opts Options, history io.Reader) (_ Report, err error) {
	if err := opts.fill(); err != nil {
		return Report{}, err
	}
	if opts.LogOrigin == "" {
		return Report{}, errors.New("chain: LogOrigin is required to publish the trust document")
	}
	rep := Report{StoreDir: opts.storeDir(), PublicKeys: opts.trustFile(), KeysDir: opts.Keys.Dir, WitnessDir: opts.Keys.WitnessDir}
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
	rep.Rows, rep.Genesis = len(blocks), blocks[0].Hash()
	// The seams are pinned to the rows just sealed from the published
	// history, and published with the keys in the trust document.
	seams, err := ledger.PinSeams(opts.Seams, blocks)
	if err != nil {
		return rep, fmt.Errorf("chain: %w", err)
	}
	trust, err := ledger.NewTrustDocument(signers, opts.BridgeKeys, rep.Genesis, seams, opts.WitnessQuorum, opts.LogOrigin)
	if err != nil {
		return rep, fmt.Errorf("chain: %w", err)
	}
	pins, err := trust.Options()
	if err != nil {
		return rep, fmt.Errorf("chain: %w", err)
	}
	sopts := store.Options{Keys: pins.Keys, Seams: pins.Seams, WitnessQuorum: pins.WitnessQuorum, Log: pins.Log, Logger: opts.Logger}
	if _, statErr := os.Stat(rep.StoreDir); statErr == nil {
		if err := sameChain(ctx, rep.StoreDir, blocks, privs, sopts); err != nil {
			return rep, err
		}
		rep.Existed = true
		rep.TrustPublished, err = writeTrustFile(rep.PublicKeys, trust)
		return rep, err
	}
	if rep.Verdict, err = store.Create(rep.StoreDir, blocks, privs, sopts); err != nil {
		return rep, err
	}
	if rep.TrustPublished, err = writeTrustFile(rep.PublicKeys, trust); err != nil {
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
	for row, err := range s.Rows(ctx, -1, true) {
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
// serves with no setup. It first brings the trust document up to date
// with opts (PublishTrust), or, when that needs it, publishes it again as
// Init does.
func Bootstrap(ctx context.Context, opts Options, historyFile string) (*Chain, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	changed, err := PublishTrust(opts)
	if err == nil {
		if changed {
			opts.Logger.Info("published the trust document again, under the configuration's policy", "file", opts.trustFile())
		}
		c, err := Open(opts)
		if !errors.Is(err, store.ErrNotInitialized) {
			return c, err
		}
	}
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, store.ErrNotInitialized):
		opts.Logger.Info("no chain yet: initialising it from the history", "data", opts.DataDir, "history", historyFile)
	case errors.Is(err, ErrTrustOutdated):
		opts.Logger.Warn("publishing the trust document again from the history", "why", err)
	default:
		return nil, err
	}
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

// ReadTrustFile reads a trust document (keys.json, or the older keys-only
// form) strictly, checks it, and returns it with its bytes. A missing file
// matches fs.ErrNotExist.
func ReadTrustFile(path string) (ledger.TrustDocument, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ledger.TrustDocument{}, nil, fmt.Errorf("chain: %w", err)
	}
	doc, err := ledger.ParseTrustDocument(data)
	if err != nil {
		return ledger.TrustDocument{}, nil, fmt.Errorf("chain: %s: %w", path, err)
	}
	if len(doc.Keys) == 0 {
		return ledger.TrustDocument{}, nil, fmt.Errorf("chain: %s: no keys", path)
	}
	return doc, data, nil
}

// PublishedTrust returns the trust document the data folder publishes and
// its bytes, as they are to be served (/keys.json); the error matches
// fs.ErrNotExist when the folder holds no chain.
func PublishedTrust(dataDir string) (ledger.TrustDocument, []byte, error) {
	return ReadTrustFile(filepath.Join(dataDir, KeysFile))
}

// writeTrustFile publishes the trust document, atomically, unless the
// file already holds it; it reports whether it wrote.
func writeTrustFile(path string, doc ledger.TrustDocument) (bool, error) {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return false, err
	}
	data = append(data, '\n')
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := renameio.WriteFile(path, data, 0o644); err != nil {
		return false, fmt.Errorf("chain: %w", err)
	}
	return true, nil
}
