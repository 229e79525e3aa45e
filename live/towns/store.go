package towns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// schema is the towns store. wall is an index of the chain's
// wall_signature blocks: payload is the block's payload in canonical form,
// whose SHA-256 is the block's payload_hash. meta holds the genesis hash of
// the chain the index belongs to and how many of its blocks were scanned.
const schema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS visitors (town TEXT PRIMARY KEY, count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	town       TEXT NOT NULL,
	at         TEXT NOT NULL,
	message    TEXT NOT NULL,
	node       TEXT NOT NULL,
	provider   TEXT NOT NULL,
	model      TEXT NOT NULL,
	reply      TEXT NOT NULL,
	memories   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_town ON messages (town, seq);
CREATE TABLE IF NOT EXISTS wall (
	block_index  INTEGER PRIMARY KEY,
	town         TEXT NOT NULL,
	block_hash   TEXT NOT NULL,
	prev_hash    TEXT NOT NULL,
	payload_hash TEXT NOT NULL,
	signed_at    TEXT NOT NULL,
	payload      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS wall_by_town ON wall (town, block_index);`

// Keys of meta.
const (
	metaGenesis = "chain_genesis" // hex hash of block 0 of the indexed chain
	metaScanned = "chain_scanned" // blocks [0, n) were scanned for wall signatures
)

// db is the towns store.
type db struct{ *sql.DB }

// openDB opens (or creates) the store at path. One connection: SQLite
// takes one writer at a time, and queueing in Go is cheaper than SQLite's
// busy-wait under many concurrent signers.
func openDB(ctx context.Context, path string) (*db, error) {
	path, err := filepath.Abs(path)
	if err != nil || strings.Contains(path, "?") {
		return nil, fmt.Errorf("towns: store path %q must be a file name without ? (%v)", path, err)
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_busy_timeout", "5000")
	q.Set("_txlock", "immediate")
	sdb, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("towns: open store: %w", err)
	}
	sdb.SetMaxOpenConns(1)
	if _, err := sdb.ExecContext(ctx, schema); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("towns: store schema: %w", err)
	}
	return &db{sdb}, nil
}

func (d *db) meta(ctx context.Context, key string) (string, error) {
	var v string
	err := d.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// wallRow is one indexed wall signature.
type wallRow struct {
	town    string
	witness Witness
	at      string
	payload string
}

func (d *db) insertWall(ctx context.Context, x execer, r wallRow) error {
	_, err := x.ExecContext(ctx, `INSERT OR IGNORE INTO wall (block_index, town, block_hash, prev_hash, payload_hash, signed_at, payload) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.witness.BlockIndex, r.town, r.witness.BlockHash.String(), r.witness.PrevHash.String(), r.witness.PayloadHash.String(), r.at, r.payload)
	return err
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// wall returns up to limit signatures of town, newest first, with an
// index below before (0 for the newest).
func (d *db) wall(ctx context.Context, town string, before int64, limit int) ([]wallRow, error) {
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := d.QueryContext(ctx, `SELECT block_index, block_hash, prev_hash, payload_hash, signed_at, payload FROM wall
		WHERE town = ? AND block_index < ? ORDER BY block_index DESC LIMIT ?`, town, before, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wallRow
	for rows.Next() {
		r := wallRow{town: town}
		var bh, ph, pl string
		if err := rows.Scan(&r.witness.BlockIndex, &bh, &ph, &pl, &r.at, &r.payload); err != nil {
			return nil, err
		}
		if err := parseHashes(map[*ledger.Hash]string{&r.witness.BlockHash: bh, &r.witness.PrevHash: ph, &r.witness.PayloadHash: pl}); err != nil {
			return nil, fmt.Errorf("towns: wall row %d: %w", r.witness.BlockIndex, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func parseHashes(m map[*ledger.Hash]string) error {
	for h, s := range m {
		v, err := ledger.ParseHash(s)
		if err != nil {
			return err
		}
		*h = v
	}
	return nil
}

// townCounts runs query, which selects (town, count) rows, into a map.
func (d *db) townCounts(ctx context.Context, query string) (map[string]int64, error) {
	rows, err := d.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var town string
		var n int64
		if err := rows.Scan(&town, &n); err != nil {
			return nil, err
		}
		out[town] = n
	}
	return out, rows.Err()
}

// The queries of townCounts: wall signatures, chat messages and visitors
// by town.
const (
	wallCounts    = `SELECT town, COUNT(*) FROM wall GROUP BY town`
	messageCounts = `SELECT town, COUNT(*) FROM messages GROUP BY town`
	visitorCounts = `SELECT town, count FROM visitors`
)

func (d *db) addVisitor(ctx context.Context, town string) error {
	_, err := d.ExecContext(ctx, `INSERT INTO visitors (town, count) VALUES (?, 1) ON CONFLICT (town) DO UPDATE SET count = count + 1`, town)
	return err
}

func (d *db) insertMessage(ctx context.Context, m Message) error {
	_, err := d.ExecContext(ctx, `INSERT INTO messages (town, at, message, node, provider, model, reply, memories) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		m.Town, m.At.UTC().Format(time.RFC3339Nano), m.Message, m.Reply.Node, m.Reply.Provider, m.Reply.Model, m.Reply.Text, m.MemoriesGiven)
	return err
}

// messages returns the last limit messages of town, newest first.
func (d *db) messages(ctx context.Context, town string, limit int) ([]Message, error) {
	rows, err := d.QueryContext(ctx, `SELECT at, message, node, provider, model, reply, memories FROM messages
		WHERE town = ? ORDER BY seq DESC LIMIT ?`, town, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		m := Message{Town: town}
		var at string
		if err := rows.Scan(&at, &m.Message, &m.Reply.Node, &m.Reply.Provider, &m.Reply.Model, &m.Reply.Text, &m.MemoriesGiven); err != nil {
			return nil, err
		}
		if m.At, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return nil, fmt.Errorf("towns: message of %s at %q: %w", town, at, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
