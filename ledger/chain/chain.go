// Package chain is this instance's chain: the application layer over
// ledger/store that owns the data folder. It opens the store with the pins
// of the trust document it published (keys, genesis, pinned seams, witness
// quorum, log), bootstraps it from the published history on first start,
// schedules the full verification walks, records the publish rule's
// decisions, appends entries signed with the instance's keys
// (ledger/keystore), and signs the log's checkpoints with the writer key.
//
//	c, err := chain.Bootstrap(ctx, chain.Options{DataDir: "data", Seams: seams, LogOrigin: "example.org/ledger"}, "content/ledger/history.jsonl")
//	defer c.Close()
//	res, err := c.Walk(ctx)                   // at start-up; WalkIfDue on a schedule
//	b, err := c.Append(ctx, ledger.Entry{...}) // signed, verified against the head, synced
//	err = c.Export(ctx, w, false)             // JSONL with the signed checkpoint over its rows
//
// The data folder holds:
//
//	ledger/               the Badger store (ledger/store)
//	keys.json             the trust document (ledger.TrustDocument): public keys, genesis, pinned seams, quorum, log
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
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/ledger/store"
	"github.com/proofsite/proofsite/ledger/tiles"
	"github.com/proofsite/proofsite/ledger/witness"
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

// Errors of the chain.
var (
	// ErrReadOnly reports an append to a chain opened without its keys.
	ErrReadOnly = errors.New("chain: opened read-only (without the private keys)")
	// ErrTrustOutdated reports a trust document (keys.json) that cannot be
	// brought up to date with the configuration by itself: an older
	// keys-only file, or a documented seam it does not pin yet. "proofsite
	// ledger init" (and Bootstrap) publishes it again, pinning the seams to
	// the rows sealed from the history.
	ErrTrustOutdated = errors.New("chain: the trust document is out of date")
)

// Options configure a Chain. Only DataDir is required; the zero value of
// every other field is documented.
type Options struct {
	// DataDir holds the store, the published keys and (by default) the
	// private keys.
	DataDir string
	// Keys says where the private keys are; an empty Dir means
	// DataDir/keys, an empty WitnessDir DataDir/witness-keys.
	Keys keystore.Options
	// Seams are the documented strict-table seams of the charter (block
	// and reason). Init pins each to the hash and prev_hash of the row it
	// seals at that index and publishes them in the trust document; Open
	// takes the pinned seams from the trust document.
	Seams []ledger.Seam
	// WitnessQuorum is the number of distinct pinned witness signatures
	// every block needs (site.yaml ledger.witness_quorum); 0 means
	// ledger.DefaultWitnessQuorum.
	WitnessQuorum int
	// LogOrigin names the chain's log, the first line of its checkpoints:
	// the site's host + "/ledger" (LogOrigin). Required by Init.
	LogOrigin string
	// BridgeKeys are the Bridge's public keys (site.yaml gate.bridge_keys),
	// published in the trust document with role bridge.
	BridgeKeys []ledger.PublishedKey
	// Genesis is a pinned genesis hash; zero means the trust document's.
	Genesis ledger.Hash
	// Trust is a pinned trust document (an auditor's, with what they add);
	// nil means the data folder's keys.json.
	Trust *ledger.TrustDocument
	// ReadOnly opens the chain without its witness keys: it can be verified
	// and exported, and Append fails with ErrReadOnly. Only Export reads a
	// private key then, the writer's, to sign the checkpoint it carries.
	ReadOnly bool
	// LogWitnesses are the C2SP tlog-witnesses every published checkpoint
	// is submitted to (PublishTiles); the cosignatures they return are
	// published with it.
	LogWitnesses []witness.Client
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
	if o.WitnessQuorum <= 0 {
		o.WitnessQuorum = ledger.DefaultWitnessQuorum
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

func (o *Options) storeDir() string  { return filepath.Join(o.DataDir, StoreDir) }
func (o *Options) trustFile() string { return filepath.Join(o.DataDir, KeysFile) }

// LogOrigin names the log of a site at baseURL: its host + "/ledger".
func LogOrigin(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("chain: base URL %q has no host to name the log after", baseURL)
	}
	return u.Host + "/ledger", nil
}

// Chain is an open chain.
type Chain struct {
	opts    Options
	trust   ledger.TrustDocument
	store   *store.Store
	signers *ledger.Signers // nil when read-only
	log     *slog.Logger

	signedMu sync.Mutex // guards signed
	signed   struct {
		cp   ledger.Checkpoint
		note []byte
	}

	walkMu   sync.Mutex // one walk at a time
	lastWalk time.Time

	tilesMu        sync.Mutex        // one tile writer at a time; guards tiles, tilesPublished and witnessed
	tiles          *tiles.Log        // nil until PublishTiles opens it
	tilesPublished int64             // the size of the last checkpoint the tiles published
	witnessed      map[string]uint64 // per log witness URL, the size it last cosigned, as far as known
}

// Open opens the chain in opts.DataDir with the pins of its trust
// document (or of opts.Trust). It fails with store.ErrNotInitialized when
// there is none (see Bootstrap and Init), and with ErrTrustOutdated for a
// keys-only file. It does not verify the chain (call Walk).
func Open(opts Options) (*Chain, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	path := opts.trustFile()
	var trust ledger.TrustDocument
	if opts.Trust != nil {
		trust, path = *opts.Trust, "the pinned trust document"
	} else {
		var err error
		trust, _, err = ReadTrustFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", store.ErrNotInitialized, path)
		}
		if err != nil {
			return nil, err
		}
	}
	if trust.Legacy() {
		return nil, fmt.Errorf("%w: %s lists keys only (the older form), no pinned seams, quorum or log: run \"proofsite ledger init\" to publish the trust document", ErrTrustOutdated, path)
	}
	pins, err := trust.Options()
	if err != nil {
		return nil, fmt.Errorf("chain: %s: %w", path, err)
	}
	if !opts.Genesis.IsZero() {
		pins.Genesis = opts.Genesis
	}
	c := &Chain{opts: opts, trust: trust, log: opts.Logger.With("component", "chain")}
	if !opts.ReadOnly {
		ks, err := keystore.Open(opts.Keys)
		if err != nil {
			return nil, fmt.Errorf("chain: %w", err)
		}
		s := ks.Signers()
		c.signers = &s
	}
	c.store, err = store.Open(opts.storeDir(), store.Options{Keys: pins.Keys, Seams: pins.Seams, Genesis: pins.Genesis,
		WitnessQuorum: pins.WitnessQuorum, Log: pins.Log, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Policy is the trust document's policy as opts configure it.
func (o Options) Policy() ledger.TrustPolicy {
	q := o.WitnessQuorum
	if q <= 0 {
		q = ledger.DefaultWitnessQuorum
	}
	return ledger.TrustPolicy{BridgeKeys: o.BridgeKeys, Seams: o.Seams, WitnessQuorum: q, Origin: o.LogOrigin}
}

// PublishTrust brings the data folder's trust document up to date with the
// policy opts configure (Options.Policy: Bridge keys, seams' reasons,
// quorum, log) and writes it, atomically, if that changed it; the keys,
// the genesis and the seams' pins stay (ledger.TrustDocument.Revise). It
// reports whether it wrote. A missing document matches fs.ErrNotExist; one
// that needs Init (keys only, or a seam not pinned yet) is
// ErrTrustOutdated.
func PublishTrust(opts Options) (bool, error) {
	if err := opts.fill(); err != nil {
		return false, err
	}
	trust, _, err := ReadTrustFile(opts.trustFile())
	if err != nil {
		return false, err
	}
	if trust.Legacy() {
		return false, fmt.Errorf("%w: %s lists keys only (the older form)", ErrTrustOutdated, opts.trustFile())
	}
	revised, err := trust.Revise(opts.Policy())
	if errors.Is(err, ledger.ErrSeamNotPinned) {
		return false, fmt.Errorf("%w: %s: %w", ErrTrustOutdated, opts.trustFile(), err)
	}
	if err != nil {
		return false, fmt.Errorf("chain: %w", err)
	}
	return writeTrustFile(opts.trustFile(), revised)
}

// Trust returns the trust document the chain was opened with: what
// verifiers pin, published as /keys.json.
func (c *Chain) Trust() ledger.TrustDocument { return c.trust }

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
	b, err := c.store.AppendEntry(ctx, e, *c.signers)
	if err != nil {
		return b, err
	}
	// The block is durable; the tiles follow it (a failure here is the
	// read path's, logged and retried on the next append or walk).
	if err := c.publishTilesFor(ctx, b.Index()); err != nil {
		c.log.Error("publishing the tiles", "err", err)
	}
	return b, nil
}

// SignCheckpoint returns cp as a C2SP signed note, signed by the writer
// key under the log's origin. The last note is kept, so asking again for
// the same checkpoint signs nothing. A read-only chain reads the writer key
// for it.
func (c *Chain) SignCheckpoint(cp ledger.Checkpoint) ([]byte, error) {
	c.signedMu.Lock()
	defer c.signedMu.Unlock()
	if c.signed.note != nil && c.signed.cp == cp {
		return c.signed.note, nil
	}
	var w ledger.PrivateKey
	if c.signers != nil {
		w = c.signers.Writer
	} else {
		var err error
		if w, err = keystore.ReadPrivateKey(filepath.Join(c.opts.Keys.Dir, keystore.WriterFile)); err != nil {
			return nil, fmt.Errorf("chain: signing the checkpoint needs the writer key: %w", err)
		}
	}
	note, err := ledger.SignCheckpoint(cp, w)
	if err != nil {
		return nil, fmt.Errorf("chain: %w", err)
	}
	c.signed.cp, c.signed.note = cp, note
	return note, nil
}

// Export writes the chain as JSONL: the header (genesis, published keys,
// documented seams, and the signed checkpoint over exactly the rows that
// follow), then every row, read from one snapshot; private adds
// descriptions and payloads (for the operator: never publish it).
func (c *Chain) Export(ctx context.Context, w io.Writer, private bool) error {
	s := c.store
	cp := s.Checkpoint() // the rows below are its first cp.Size rows
	note, err := c.SignCheckpoint(cp)
	if err != nil {
		return err
	}
	ew, err := ledger.NewWriter(w, ledger.ExportHeader{
		GenesisHash: s.GenesisHash(), Keys: s.Keys().Published(), DocumentedSeams: s.Seams(), Private: private, Checkpoint: string(note),
	})
	if err != nil {
		return err
	}
	for row, err := range s.Rows(ctx, cp.Size, private) {
		if err != nil {
			return err
		}
		if err := ew.Write(row); err != nil {
			return err
		}
	}
	return ew.Flush()
}
