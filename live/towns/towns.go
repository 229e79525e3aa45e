package towns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/live/memory"
)

// Errors of the package. Callers branch on them with errors.Is and
// errors.As; the messages are for people and may change.
var (
	// ErrUnknownTown reports a town id that is not one of the live towns.
	ErrUnknownTown = errors.New("towns: no such town")
	// ErrInvalid reports a request that is refused before anything is
	// written; the error is a *FieldError naming the field.
	ErrInvalid = errors.New("towns: invalid request")
	// ErrWrite reports a write that failed: the chain append of a
	// signature or an exchange, or the store's write of a chat message.
	ErrWrite = errors.New("towns: write failed")
	// ErrMemory reports a town memory that could not be read.
	ErrMemory = errors.New("towns: memory unavailable")
)

// FieldError is a refused field of a request: which field and why, in
// words fit for the client (it never quotes the value).
type FieldError struct {
	Field  string // the JSON member, e.g. "signer"
	Reason string
}

func (e *FieldError) Error() string { return "towns: " + e.Field + ": " + e.Reason }

// Unwrap returns ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// The kinds of the chain blocks the towns append.
const (
	KindWallSignature = "wall_signature"
	KindExchange      = "inter_node_exchange"
)

// Chain is what the towns need of the ledger: durable appends, and reads
// of the blocks and their payloads to index the walls. cmd passes the
// instance's chain.
type Chain interface {
	// Append records e and returns its block once it is durable.
	Append(ctx context.Context, e ledger.Entry) (ledger.Block, error)
	// Range yields the blocks with from <= index < to, in index order.
	Range(ctx context.Context, from, to int64) iter.Seq2[ledger.Block, error]
	// Private returns the payload and description of block i.
	Private(i int64) (ledger.Private, error)
	// BlockByIndex returns the block at index i.
	BlockByIndex(i int64) (ledger.Block, error)
	Count() int64
	Genesis() ledger.Block
}

// Memory is the nodes' memory, read to give a town's node its memory.
type Memory interface {
	// Retrieve returns up to limit memories of node, newest first.
	Retrieve(ctx context.Context, node string, limit int) ([]memory.Memory, error)
}

// Options configure Open. Charter, Chain and Memory are required.
type Options struct {
	// Charter names the towns and the nodes that live in them.
	Charter *charter.Charter
	Chain   Chain
	Memory  Memory
	// Responder answers as the towns' nodes; without one, chat and
	// exchanges fail with ErrNoResponder.
	Responder Responder
	// Logger receives what Open indexes and writes that fail after the
	// chain holds them; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Towns is the live towns.
type Towns struct {
	opts     Options
	log      *slog.Logger
	db       *db
	towns    []*town // charter order
	visitors visitors
}

// town is one live town and its counts.
type town struct {
	charter.Town
	node     charter.Node
	memoryID string

	visitors, messages, wall atomic.Int64
}

// Open opens the towns store in dir (creating it) and brings the wall index
// up to date with the chain: it reads the blocks appended since the last
// Open (all of them the first time, or when the chain is not the one the
// index was made from) and indexes their wall signatures.
func Open(ctx context.Context, dir string, opts Options) (*Towns, error) {
	if opts.Charter == nil || opts.Chain == nil || opts.Memory == nil {
		return nil, errors.New("towns: Charter, Chain and Memory are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t := &Towns{opts: opts, log: opts.Logger.With("component", "towns")}
	for _, ct := range opts.Charter.Towns {
		i := slices.IndexFunc(opts.Charter.Nodes, func(n charter.Node) bool { return n.Designation == ct.Node })
		if i < 0 || opts.Charter.Nodes[i].ID == "" || opts.Charter.Nodes[i].MemoryID() == "" {
			return nil, fmt.Errorf("towns: town %s: its node %s is not an AI node with a federation id", ct.ID, ct.Node)
		}
		n := opts.Charter.Nodes[i]
		t.towns = append(t.towns, &town{Town: ct, node: n, memoryID: n.MemoryID()})
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("towns: %w", err)
	}
	var err error
	if t.db, err = openDB(ctx, filepath.Join(dir, "towns.sqlite")); err != nil {
		return nil, err
	}
	if err := t.load(ctx); err != nil {
		t.db.Close()
		return nil, err
	}
	return t, nil
}

// Close closes the store. Stop the callers first.
func (t *Towns) Close() error { return t.db.Close() }

// load indexes the chain's new wall signatures and reads the counts.
func (t *Towns) load(ctx context.Context) error {
	if err := t.indexWalls(ctx); err != nil {
		return err
	}
	walls, err := t.db.townCounts(ctx, wallCounts)
	if err != nil {
		return fmt.Errorf("towns: count signatures: %w", err)
	}
	messages, err := t.db.townCounts(ctx, messageCounts)
	if err != nil {
		return fmt.Errorf("towns: count messages: %w", err)
	}
	visitors, err := t.db.townCounts(ctx, visitorCounts)
	if err != nil {
		return fmt.Errorf("towns: count visitors: %w", err)
	}
	for _, tw := range t.towns {
		tw.wall.Store(walls[tw.ID])
		tw.messages.Store(messages[tw.ID])
		tw.visitors.Store(visitors[tw.ID])
	}
	return nil
}

// indexWalls indexes the wall signatures of the blocks not scanned yet, in
// one transaction. An index made from another chain, or whose newest
// signature the chain no longer holds, is rebuilt from block 0.
func (t *Towns) indexWalls(ctx context.Context) error {
	c := t.opts.Chain
	genesis := c.Genesis().Hash().String()
	from := int64(0)
	if have, err := t.db.meta(ctx, metaGenesis); err != nil {
		return fmt.Errorf("towns: %w", err)
	} else if have == genesis {
		scanned, err := t.db.meta(ctx, metaScanned)
		if err != nil {
			return fmt.Errorf("towns: %w", err)
		}
		fmt.Sscan(scanned, &from)
		if !t.newestIndexedOnChain(ctx) {
			from = 0
		}
	}
	count := c.Count()
	if from > count {
		from = 0
	}
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("towns: index walls: %w", err)
	}
	defer tx.Rollback()
	if from == 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM wall`); err != nil {
			return fmt.Errorf("towns: index walls: %w", err)
		}
	}
	n := 0
	for b, err := range c.Range(ctx, from, count) {
		if err != nil {
			return fmt.Errorf("towns: index walls: %w", err)
		}
		if b.Header().Kind != KindWallSignature {
			continue
		}
		r, err := t.wallRowOf(b)
		if err != nil {
			return err
		}
		if r.town == "" {
			continue
		}
		if err := t.db.insertWall(ctx, tx, r); err != nil {
			return fmt.Errorf("towns: index walls: %w", err)
		}
		n++
	}
	for k, v := range map[string]string{metaGenesis: genesis, metaScanned: fmt.Sprint(count)} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return fmt.Errorf("towns: index walls: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("towns: index walls: %w", err)
	}
	t.log.Debug("walls indexed", "from_block", from, "to_block", count, "signatures", n)
	return nil
}

// newestIndexedOnChain reports whether the chain still holds the newest
// indexed signature's block (true when none is indexed).
func (t *Towns) newestIndexedOnChain(ctx context.Context) bool {
	var idx int64
	var hash string
	err := t.db.QueryRowContext(ctx, `SELECT block_index, block_hash FROM wall ORDER BY block_index DESC LIMIT 1`).Scan(&idx, &hash)
	if err != nil {
		return errors.Is(err, sql.ErrNoRows)
	}
	b, err := t.opts.Chain.BlockByIndex(idx)
	return err == nil && b.Hash().String() == hash
}

// wallRowOf reads the payload of a wall_signature block and checks that it
// is the one the block commits to. A block whose payload this server does
// not hold is left out (its town is empty).
func (t *Towns) wallRowOf(b ledger.Block) (wallRow, error) {
	priv, err := t.opts.Chain.Private(b.Index())
	if err != nil {
		t.log.Warn("wall signature without its payload: not on the wall", "block", b.Index(), "err", err)
		return wallRow{}, nil
	}
	payload, err := decodeWallPayload(b, priv.Payload)
	if err != nil {
		return wallRow{}, err
	}
	return wallRow{town: payload.Town, witness: witnessOf(b), at: b.Header().Timestamp, payload: string(priv.Payload)}, nil
}

// town returns the live town id.
func (t *Towns) town(id string) (*town, error) {
	for _, tw := range t.towns {
		if tw.ID == id {
			return tw, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownTown, id)
}

// IDs returns the ids of the live towns, in charter order.
func (t *Towns) IDs() []string {
	ids := make([]string, len(t.towns))
	for i, tw := range t.towns {
		ids[i] = tw.ID
	}
	return ids
}

// Status is a town's live state.
type Status struct {
	ID             string       `json:"id"`
	Name           string       `json:"name"`
	Description    string       `json:"description,omitempty"`
	Node           charter.Node `json:"node" doc:"The node that lives in the town"`
	MemoryNode     string       `json:"memory_node" doc:"The node's id in memory: its memories (GET /api/memory/retrieve/{node_id}) are given to it with every chat message"`
	Status         string       `json:"status" enum:"live" doc:"live: the town answers its wall, chat and inter-node routes"`
	Visitors       int64        `json:"visitors" doc:"Distinct visitors, each counted once per town per UTC day; no address is stored"`
	VisitorsToday  int64        `json:"visitors_today" doc:"Distinct visitors since UTC midnight (or since this server started, if later)"`
	Messages       int64        `json:"messages" doc:"Chat messages the town keeps"`
	WallSignatures int64        `json:"wall_signatures" doc:"Permanent signatures on the wall, each a chain block"`
}

// List returns every live town's status, in charter order.
func (t *Towns) List() []Status {
	out := make([]Status, len(t.towns))
	for i, tw := range t.towns {
		out[i] = t.status(tw)
	}
	return out
}

// Town returns one town's status, or ErrUnknownTown.
func (t *Towns) Town(id string) (Status, error) {
	tw, err := t.town(id)
	if err != nil {
		return Status{}, err
	}
	return t.status(tw), nil
}

func (t *Towns) status(tw *town) Status {
	return Status{ID: tw.ID, Name: tw.Name, Description: tw.Description, Node: tw.node, MemoryNode: tw.memoryID, Status: "live",
		Visitors: tw.visitors.Load(), VisitorsToday: t.visitors.today(tw.ID, t.opts.Now()), Messages: tw.messages.Load(), WallSignatures: tw.wall.Load()}
}
