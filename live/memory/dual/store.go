package dual

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/memory"
)

// Chain is the part of the ledger a Store needs: the durable append every
// writing route uses (live.Appender) and a read of a block by index, for
// the reconciler. cmd passes the instance's chain (ledger/chain.Chain's
// Append and its store's BlockByIndex).
type Chain interface {
	// Append records e and returns its block once it is durable.
	Append(ctx context.Context, e ledger.Entry) (ledger.Block, error)
	// BlockByIndex returns the block at index i.
	BlockByIndex(i int64) (ledger.Block, error)
}

// Options configure a Store. The zero value of each field is documented.
type Options struct {
	// Chain witnesses every memory. Required.
	Chain Chain
	// PostgresDSN, when set, selects PostgreSQL (through pgx) as the SQL
	// store, for several replicas sharing one database; for example
	// "postgres://user@db.internal/proofsite?sslmode=verify-full".
	PostgresDSN string
	// SQLitePath is the SQLite file used when PostgresDSN is empty; empty
	// means "secondary.sqlite" in the memory directory.
	SQLitePath string
	// Nodes is the roster: when set, memories of other node ids are
	// refused with ErrUnknownNode. Empty accepts every well-formed id.
	Nodes []string
	// MaxConns bounds the SQL store's open connections; zero means 4.
	// Few connections serve best on a small machine (on 2 cores, 32
	// concurrent Puts on PostgreSQL ran about three times faster through 4
	// connections than through 16); raise it where the database has cores
	// of its own.
	MaxConns int
	// SecondaryTimeout bounds the SQL write of a Put and each SQL call of
	// Status; zero means 5 seconds. SQLite's busy timeout is the same.
	SecondaryTimeout time.Duration
	// ReplicateEvery is how often Run drains the outbox while it is not
	// empty; zero means 2 seconds.
	ReplicateEvery time.Duration
	// ReconcileEvery is how often Run reconciles; zero means 10 minutes.
	ReconcileEvery time.Duration
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o *Options) fill(dir string) error {
	if o.Chain == nil {
		return errors.New("memory: no chain to witness memories")
	}
	for _, n := range o.Nodes {
		if err := memory.CheckNodeID(n); err != nil {
			return fmt.Errorf("memory: roster: %w", err)
		}
	}
	if o.SQLitePath == "" {
		o.SQLitePath = filepath.Join(dir, "secondary.sqlite")
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 4
	}
	if o.SecondaryTimeout <= 0 {
		o.SecondaryTimeout = 5 * time.Second
	}
	if o.ReplicateEvery <= 0 {
		o.ReplicateEvery = 2 * time.Second
	}
	if o.ReconcileEvery <= 0 {
		o.ReconcileEvery = 10 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Store is memory with dual-write. A Store is safe for concurrent use.
type Store struct {
	opts      Options
	log       *slog.Logger
	primary   *primary
	secondary *secondary
	locks     [64]sync.Mutex // by id: one Put at a time per memory
	seed      maphash.Seed
	report    atomic.Pointer[memory.Report] // the last reconciliation; nil before the first
	closed    atomic.Bool
	replicate sync.Mutex // one Replicate or Reconcile at a time

	// afterPrimary, set only by tests, runs between the primary and the
	// secondary write of a Put.
	afterPrimary func(memory.Memory)
}

// Open opens (or creates) the memory in dir: the primary Badger store in
// dir/badger and, unless Options name another, the SQL store in
// dir/secondary.sqlite, whose schema it creates or migrates. The primary
// must open, and a malformed DSN or a schema newer than this program
// fails Open; a SQL store that does not answer does not: Puts then keep
// their memories in the outbox (and fail with a WriteSecondary error),
// Status says so, and the schema is made when the database answers.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if err := opts.fill(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	log := opts.Logger.With("component", "memory")
	p, err := openPrimary(filepath.Join(dir, "badger"), log)
	if err != nil {
		return nil, err
	}
	d, dsn := postgres, opts.PostgresDSN
	if dsn == "" {
		d = sqlite
		if dsn, err = sqliteDSN(opts.SQLitePath, opts.SecondaryTimeout); err != nil {
			p.close()
			return nil, err
		}
	}
	sec, err := openSecondary(d, dsn, p.origin, opts.MaxConns)
	if err == nil {
		if err = sec.ready(ctx); err != nil && !errors.Is(err, memory.ErrSchemaNewer) {
			log.Warn("the SQL store does not answer; memories wait in the outbox", "backend", d.backend, "err", err)
			err = nil
		}
	}
	if err != nil {
		if sec != nil {
			sec.close()
		}
		p.close()
		return nil, err
	}
	s := &Store{opts: opts, log: log, primary: p, secondary: sec, seed: maphash.MakeSeed()}
	r, err := p.loadReport()
	if err != nil {
		log.Warn("last reconciliation report unreadable", "err", err)
	}
	s.report.Store(r)
	log.Debug("opened", "dir", dir, "secondary", d.backend, "memories", p.count.Load())
	return s, nil
}

// Close closes both stores. Stop Run (cancel its context) first.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.replicate.Lock()
	defer s.replicate.Unlock()
	for i := range s.locks {
		s.locks[i].Lock()
		defer s.locks[i].Unlock()
	}
	return errors.Join(s.secondary.close(), s.primary.close())
}

// Backend returns the SQL backend in use: BackendSQLite or BackendPostgres.
func (s *Store) Backend() string { return s.secondary.d.backend }

// Put stores the memory d describes and reports success only once it is
// durable in both stores. In order it
//
//  1. validates d (ErrInvalid, ErrUnknownNode) and derives the id;
//  2. appends the witnessing chain block (WriteChain);
//  3. writes the memory and its outbox entry to the primary in one synced
//     Badger transaction (WritePrimary);
//  4. writes the memory to the SQL store (WriteSecondary) and then drops
//     the outbox entry.
//
// A failure returns a *WriteError naming the write. After a failed
// secondary write the memory is durable in the primary and the returned
// Stored is filled in: the outbox makes the replicator copy it later, and
// a retry of the same Put writes the SQL store again without a second
// block. A crash between steps 2 and 3 leaves a witness block that no
// memory names (the retry gets a new block); nothing else is half-written.
func (s *Store) Put(ctx context.Context, d memory.Draft) (memory.Stored, error) {
	if err := s.checkNode(d.NodeID); err != nil {
		return memory.Stored{}, err
	}
	m, err := memory.New(d, s.opts.Now())
	if err != nil {
		return memory.Stored{}, err
	}
	mu := &s.locks[maphash.String(s.seed, m.ID)%uint64(len(s.locks))]
	mu.Lock()
	defer mu.Unlock()
	if s.closed.Load() {
		return memory.Stored{}, memory.ErrClosed
	}

	if have, err := s.primary.get(m.ID); err == nil {
		return s.retry(ctx, have)
	} else if !errors.Is(err, memory.ErrNotFound) {
		return memory.Stored{}, &memory.WriteError{Write: memory.WritePrimary, Backend: "badger", ID: m.ID, Err: err}
	}

	payload, err := m.WitnessPayload()
	if err != nil {
		return memory.Stored{}, err
	}
	b, err := s.opts.Chain.Append(ctx, ledger.Entry{Kind: memory.WitnessKind, Payload: payload})
	if err == nil {
		m.Witness = memory.Witness{BlockIndex: b.Index(), BlockHash: b.Hash()}
		err = m.CheckWitness(b)
	}
	if err != nil {
		return memory.Stored{}, &memory.WriteError{Write: memory.WriteChain, Backend: "chain", ID: m.ID, Err: err}
	}

	if err := s.primary.insert(m, s.opts.Now()); err != nil {
		return memory.Stored{}, &memory.WriteError{Write: memory.WritePrimary, Backend: "badger", ID: m.ID, Err: err}
	}
	if s.afterPrimary != nil {
		s.afterPrimary(m)
	}
	return memory.Stored{Memory: m, Created: true}, s.deliver(ctx, m)
}

// retry answers a Put of a memory the primary holds: done if it has
// reached the SQL store, else one more delivery.
func (s *Store) retry(ctx context.Context, m memory.Memory) (memory.Stored, error) {
	pending, err := s.primary.pending(m.ID)
	if err != nil {
		return memory.Stored{}, &memory.WriteError{Write: memory.WritePrimary, Backend: "badger", ID: m.ID, Err: err}
	}
	if pending {
		err = s.deliver(ctx, m)
	}
	return memory.Stored{Memory: m}, err
}

// deliver writes m to the SQL store and then drops its outbox entry. A
// caller that gives up (ctx cancelled) does not cut the write short; the
// SecondaryTimeout does. A failure to drop the entry is only logged: both
// stores hold m, and the replicator's next delivery is a no-op that drops
// it.
func (s *Store) deliver(ctx context.Context, m memory.Memory) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.SecondaryTimeout)
	defer cancel()
	if err := s.secondary.putOne(ctx, m); err != nil {
		s.log.Warn("secondary write failed; the outbox keeps the memory", "id", m.ID, "err", err)
		return &memory.WriteError{Write: memory.WriteSecondary, Backend: s.secondary.d.backend, ID: m.ID, Err: err}
	}
	if err := s.primary.ack(m.ID); err != nil {
		s.log.Warn("outbox entry not dropped; the replicator will", "id", m.ID, "err", err)
	}
	return nil
}

// Get returns the memory with id, from the primary store.
func (s *Store) Get(id string) (memory.Memory, error) {
	if s.closed.Load() {
		return memory.Memory{}, memory.ErrClosed
	}
	return s.primary.get(id)
}

// DefaultLimit and MaxLimit bound Retrieve.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Retrieve returns up to limit memories of node from the primary store,
// newest first (limit 0 means DefaultLimit; more than MaxLimit is cut to
// MaxLimit). A node with no memories has an empty list.
func (s *Store) Retrieve(ctx context.Context, node string, limit int) ([]memory.Memory, error) {
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, memory.ErrClosed
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	return s.primary.list(ctx, node, min(limit, MaxLimit))
}

func (s *Store) checkNode(node string) error {
	if err := memory.CheckNodeID(node); err != nil {
		return err
	}
	if len(s.opts.Nodes) > 0 && !slices.Contains(s.opts.Nodes, node) {
		return fmt.Errorf("%w: %q", memory.ErrUnknownNode, node)
	}
	return nil
}
