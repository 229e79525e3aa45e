// Package chain is this instance's chain: the application layer over
// ledger/store that owns the data folder. It opens the store with the
// published keys and the trust settings (documented seams, pinned genesis),
// bootstraps it from the published history on first start, schedules the
// full verification walks, records the publish rule's decisions, and
// appends entries signed with the instance's keys (ledger/keystore).
//
//	c, err := chain.Bootstrap(ctx, chain.Options{DataDir: "data", Seams: seams}, "content/ledger/history.jsonl")
//	defer c.Close()
//	res, err := c.Walk(ctx)                   // at start-up; WalkIfDue on a schedule
//	b, err := c.Append(ctx, ledger.Entry{...}) // signed, verified against the head, synced
//
// The data folder holds:
//
//	ledger/               the Badger store (ledger/store)
//	keys.json             the published public keys (ledger.KeysDocument)
//	keys/writer.pem       the writer's private key (ledger/keystore)
//	witness-keys/         the witnesses' private keys, unless Options.Keys.WitnessDir puts them elsewhere
//
// A Chain is safe for concurrent use.
package chain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/ledger/store"
)

// Where things live in the data folder.
const (
	StoreDir      = "ledger"       // the Badger store
	KeysFile      = "keys.json"    // the published public keys
	KeysDir       = "keys"         // the writer key (keystore.Options.Dir)
	WitnessKeyDir = "witness-keys" // the witness keys (keystore.Options.WitnessDir)
)

// DefaultWalkEvery is how often WalkIfDue re-verifies the whole chain
// unless Options.WalkEvery says otherwise.
const DefaultWalkEvery = 10 * time.Minute

// ErrReadOnly reports an append to a chain opened without its keys.
var ErrReadOnly = errors.New("chain: opened read-only (without the private keys)")

// Options configure a Chain. Only DataDir is required; the zero value of
// every other field is documented.
type Options struct {
	// DataDir holds the store, the published keys and (by default) the
	// private keys.
	DataDir string
	// Keys says where the private keys are; an empty Dir means
	// DataDir/keys, an empty WitnessDir DataDir/witness-keys.
	Keys keystore.Options
	// Seams are the documented strict-table seams (from the charter).
	Seams []ledger.Seam
	// Genesis is a pinned genesis hash; zero means the hash recorded when
	// the store was created.
	Genesis ledger.Hash
	// PublicKeys is a pinned public keys file (keys.json form); empty means
	// DataDir/keys.json.
	PublicKeys string
	// ReadOnly opens the chain without reading any private key: it can be
	// verified and exported, and Append fails with ErrReadOnly.
	ReadOnly bool
	// WalkEvery is how often WalkIfDue walks; 0 means DefaultWalkEvery.
	WalkEvery time.Duration
	// Logger receives the walks' progress and verdicts and what bootstrap
	// does; nil discards.
	Logger *slog.Logger
}

func (o *Options) fill() error {
	if o.DataDir == "" {
		return errors.New("chain: DataDir is required")
	}
	if o.Keys.Dir == "" {
		o.Keys.Dir = filepath.Join(o.DataDir, KeysDir)
	}
	if o.Keys.WitnessDir == "" {
		o.Keys.WitnessDir = filepath.Join(o.DataDir, WitnessKeyDir)
	}
	if o.PublicKeys == "" {
		o.PublicKeys = filepath.Join(o.DataDir, KeysFile)
	}
	if o.WalkEvery <= 0 {
		o.WalkEvery = DefaultWalkEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Keys.Logger == nil {
		o.Keys.Logger = o.Logger
	}
	return nil
}

func (o *Options) storeDir() string { return filepath.Join(o.DataDir, StoreDir) }

// Chain is an open chain.
type Chain struct {
	opts    Options
	store   *store.Store
	signers *ledger.Signers // nil when read-only
	log     *slog.Logger

	walkMu   sync.Mutex // one walk at a time
	lastWalk time.Time
}

// Open opens the chain in opts.DataDir. It fails with
// store.ErrNotInitialized when there is none (see Bootstrap and Init); it
// does not verify the chain (call Walk).
func Open(opts Options) (*Chain, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	keys, err := ReadKeysFile(opts.PublicKeys)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", store.ErrNotInitialized, opts.PublicKeys)
	}
	if err != nil {
		return nil, err
	}
	c := &Chain{opts: opts, log: opts.Logger.With("component", "chain")}
	if !opts.ReadOnly {
		ks, err := keystore.Open(opts.Keys)
		if err != nil {
			return nil, fmt.Errorf("chain: %w", err)
		}
		s := ks.Signers()
		c.signers = &s
	}
	c.store, err = store.Open(opts.storeDir(), store.Options{Keys: keys, Seams: opts.Seams, Genesis: opts.Genesis, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Store is the chain's store, for readers (the live edge's routes, the
// exporter). Appends go through Append.
func (c *Chain) Store() *store.Store { return c.store }

// Close closes the store.
func (c *Chain) Close() error { return c.store.Close() }

// Append seals e with the instance's keys as the next block, verifies it
// against the head and returns once it is synced to disk.
func (c *Chain) Append(ctx context.Context, e ledger.Entry) (ledger.Block, error) {
	if c.signers == nil {
		return ledger.Block{}, ErrReadOnly
	}
	return c.store.AppendEntry(ctx, e, *c.signers)
}

// Export writes the chain as JSONL: the header (genesis, published keys,
// documented seams), then every row; private adds descriptions and
// payloads (for the operator: never publish it).
func (c *Chain) Export(ctx context.Context, w io.Writer, private bool) error {
	s := c.store
	ew, err := ledger.NewWriter(w, ledger.ExportHeader{
		GenesisHash: s.GenesisHash(), Keys: s.Keys().Published(), DocumentedSeams: s.Seams(), Private: private,
	})
	if err != nil {
		return err
	}
	for row, err := range s.Rows(ctx, private) {
		if err != nil {
			return err
		}
		if err := ew.Write(row); err != nil {
			return err
		}
	}
	return ew.Flush()
}
