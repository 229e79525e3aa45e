package dual

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/memory"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// The SQL backends.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// dialect is what differs between the two SQL backends.
type dialect struct {
	backend string
	// byID orders rows by id byte-wise whatever the database's collation.
	byID string
	// lock serialises migrations between replicas sharing a database.
	lock string
	// numbered placeholders ($1, $2, …) instead of ?.
	numbered bool
}

var (
	sqlite   = dialect{backend: BackendSQLite, byID: "id COLLATE BINARY"}
	postgres = dialect{backend: BackendPostgres, byID: `id COLLATE "C"`, numbered: true,
		lock: "SELECT pg_advisory_xact_lock(7236961001)"} // a constant of this package: "memory" migrations
)

// bind rewrites the ? placeholders of q for d.
func (d dialect) bind(q string) string {
	if !d.numbered {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// migrations create and change the schema, in order; the version of a
// migration is its index + 1. Applied versions are recorded in
// memory_schema. Columns are TEXT and BIGINT only, the same in both
// backends; created_at is the fixed-width text of memory.CreatedAtLayout, so it
// sorts in time order.
var migrations = []string{
	`CREATE TABLE memories (
		id            TEXT PRIMARY KEY,
		node_id       TEXT NOT NULL,
		content       TEXT NOT NULL,
		content_hash  TEXT NOT NULL,
		created_at    TEXT NOT NULL,
		witness_index BIGINT NOT NULL,
		witness_hash  TEXT NOT NULL,
		record_hash   TEXT NOT NULL,
		origin        TEXT NOT NULL
	);
	CREATE INDEX memories_by_node ON memories (node_id, created_at);
	CREATE INDEX memories_by_origin ON memories (origin)`,
}

const memoryColumns = "id, node_id, content, content_hash, created_at, witness_index, witness_hash, record_hash, origin"

// secondary is the SQL store every memory is copied to.
type secondary struct {
	db     *sql.DB
	d      dialect
	origin string // the primary's origin: rows this replica wrote carry it

	insertQ, repairQ, hashQ, scanQ, countQ string

	migrating sync.Mutex
	migrated  atomic.Bool // the schema is current; until then every call tries to migrate

	// fault, set only by tests, runs before every statement and fails it
	// when it returns an error: deterministic interleavings of outages.
	fault func(op string) error
}

// sqliteDSN returns the DSN of the SQLite file at path: WAL, synchronous
// FULL (a commit is on disk before it returns), a busy timeout, and
// write transactions that take the write lock when they begin.
func sqliteDSN(path string, busy time.Duration) (string, error) {
	// A plain absolute name: no "file:" URI, whose %-escapes SQLite would
	// decode; the driver cuts the query off at the first ?.
	path, err := filepath.Abs(path)
	if err != nil || strings.Contains(path, "?") {
		return "", fmt.Errorf("memory: SQLite path %q must be a file name without ? (%v)", path, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_txlock", "immediate")
	return path + "?" + q.Encode(), nil
}

// openSecondary opens the database without connecting to it (ready does
// on first use); a malformed DSN fails here.
func openSecondary(d dialect, dsn, origin string, maxConns int) (*secondary, error) {
	var db *sql.DB
	if d == postgres {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("memory: postgres DSN: %w", err)
		}
		db = stdlib.OpenDB(*cfg)
	} else {
		var err error
		if db, err = sql.Open("sqlite", dsn); err != nil {
			return nil, fmt.Errorf("memory: open sqlite store: %w", err)
		}
	}
	db.SetMaxOpenConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &secondary{
		db: db, d: d, origin: origin,
		insertQ: d.bind("INSERT INTO memories (" + memoryColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"),
		repairQ: d.bind("INSERT INTO memories (" + memoryColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET " +
			"node_id = excluded.node_id, content = excluded.content, content_hash = excluded.content_hash, created_at = excluded.created_at, " +
			"witness_index = excluded.witness_index, witness_hash = excluded.witness_hash, record_hash = excluded.record_hash, origin = excluded.origin"),
		hashQ:  d.bind("SELECT record_hash FROM memories WHERE id = ?"),
		scanQ:  "SELECT " + memoryColumns + " FROM memories ORDER BY " + d.byID,
		countQ: d.bind("SELECT count(*) FROM memories WHERE origin = ?"),
	}
	return s, nil
}

// ready migrates the schema unless that is done. Every call to the
// database goes through it, so a database that was down when the Store
// opened gets its schema when it answers.
func (s *secondary) ready(ctx context.Context) error {
	if s.migrated.Load() {
		return nil
	}
	s.migrating.Lock()
	defer s.migrating.Unlock()
	if s.migrated.Load() {
		return nil
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	s.migrated.Store(true)
	return nil
}

func (s *secondary) close() error { return s.db.Close() }

func (s *secondary) check(op string) error {
	if s.fault != nil {
		return s.fault(op)
	}
	return nil
}

// migrate applies the migrations not yet recorded, in one transaction.
func (s *secondary) migrate(ctx context.Context) error {
	if err := s.check("migrate"); err != nil {
		return fmt.Errorf("memory: %s store: migrate: %w", s.d.backend, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("memory: %s store: migrate: %w", s.d.backend, err)
	}
	defer tx.Rollback()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return fmt.Errorf("memory: %s store: migrate: lock: %w", s.d.backend, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS memory_schema (version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)"); err != nil {
		return fmt.Errorf("memory: %s store: migrate: %w", s.d.backend, err)
	}
	var have int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM memory_schema").Scan(&have); err != nil {
		return fmt.Errorf("memory: %s store: migrate: %w", s.d.backend, err)
	}
	if have > len(migrations) {
		return fmt.Errorf("%w: %s store: schema version %d, this program knows %d", memory.ErrSchemaNewer, s.d.backend, have, len(migrations))
	}
	for v := have + 1; v <= len(migrations); v++ {
		for _, stmt := range strings.Split(migrations[v-1], ";") {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("memory: %s store: migration %d: %w", s.d.backend, v, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.d.bind("INSERT INTO memory_schema (version, applied_at) VALUES (?, ?)"), v, memory.FormatCreatedAt(time.Now())); err != nil {
			return fmt.Errorf("memory: %s store: migration %d: %w", s.d.backend, v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("memory: %s store: migrate: %w", s.d.backend, err)
	}
	return nil
}

// execer is what both *sql.DB and *sql.Tx offer.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *secondary) args(m memory.Memory, h ledger.Hash) []any {
	return []any{m.ID, m.NodeID, string(m.Content), m.ContentHash.String(), memory.FormatCreatedAt(m.CreatedAt),
		m.Witness.BlockIndex, m.Witness.BlockHash.String(), h.String(), s.origin}
}

// put inserts m unless its id is stored. The same id with the same record
// hash is a no-op; with another record hash it is ErrConflict and the row
// is left as it is.
func (s *secondary) put(ctx context.Context, x execer, m memory.Memory) error {
	if err := s.check("put"); err != nil {
		return err
	}
	h, err := m.Hash()
	if err != nil {
		return err
	}
	res, err := x.ExecContext(ctx, s.insertQ, s.args(m, h)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var have string
	if err := x.QueryRowContext(ctx, s.hashQ, m.ID).Scan(&have); err != nil {
		return err
	}
	if have != h.String() {
		return fmt.Errorf("%w: %s: the %s store holds record %s, the primary %s", memory.ErrConflict, m.ID, s.d.backend, have, h)
	}
	return nil
}

// putOne is put in its own (implicit) transaction.
func (s *secondary) putOne(ctx context.Context, m memory.Memory) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := s.put(ctx, s.db, m); err != nil {
		return fmt.Errorf("memory: %s store: write %s: %w", s.d.backend, m.ID, err)
	}
	return nil
}

// putBatch puts every memory of ms in one transaction. It returns the ids
// that conflict (the others are committed) or an error (none is).
func (s *secondary) putBatch(ctx context.Context, ms []memory.Memory) (conflicts []string, err error) {
	if err := s.ready(ctx); err != nil {
		return nil, err
	}
	if err := s.check("begin"); err != nil {
		return nil, fmt.Errorf("memory: %s store: %w", s.d.backend, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("memory: %s store: %w", s.d.backend, err)
	}
	defer tx.Rollback()
	for _, m := range ms {
		err := s.put(ctx, tx, m)
		if errors.Is(err, memory.ErrConflict) {
			conflicts = append(conflicts, m.ID)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("memory: %s store: write %s: %w", s.d.backend, m.ID, err)
		}
	}
	if err := s.check("commit"); err != nil {
		return nil, fmt.Errorf("memory: %s store: commit: %w", s.d.backend, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("memory: %s store: commit: %w", s.d.backend, err)
	}
	return conflicts, nil
}

// repair writes ms over whatever rows have their ids, in one
// transaction. Only the reconciler calls it, with memories read from the
// primary whose witness it checked.
func (s *secondary) repair(ctx context.Context, ms []memory.Memory) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := s.check("repair"); err != nil {
		return fmt.Errorf("memory: %s store: repair: %w", s.d.backend, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("memory: %s store: repair: %w", s.d.backend, err)
	}
	defer tx.Rollback()
	for _, m := range ms {
		h, err := m.Hash()
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.repairQ, s.args(m, h)...); err != nil {
			return fmt.Errorf("memory: %s store: repair %s: %w", s.d.backend, m.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("memory: %s store: repair: %w", s.d.backend, err)
	}
	return nil
}

// hash returns the record hash the SQL store holds for id, zero when it
// holds none.
func (s *secondary) hash(ctx context.Context, id string) (ledger.Hash, error) {
	if err := s.ready(ctx); err != nil {
		return ledger.Hash{}, err
	}
	if err := s.check("hash"); err != nil {
		return ledger.Hash{}, fmt.Errorf("memory: %s store: read %s: %w", s.d.backend, id, err)
	}
	var have string
	err := s.db.QueryRowContext(ctx, s.hashQ, id).Scan(&have)
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Hash{}, nil
	}
	if err != nil {
		return ledger.Hash{}, fmt.Errorf("memory: %s store: read %s: %w", s.d.backend, id, err)
	}
	h, err := ledger.ParseHash(have)
	if err != nil {
		return ledger.Hash{}, fmt.Errorf("%w: %s store: record_hash of %s: %w", memory.ErrCorrupt, s.d.backend, id, err)
	}
	return h, nil
}

// row is a memory as the SQL store holds it.
type row struct {
	id, origin string
	// hash is the record hash recomputed from the row's columns; zero when
	// they do not form a valid memory, or disagree with the record_hash
	// column.
	hash ledger.Hash
}

// rows yields every row in id order (byte-wise), from one statement: a
// snapshot of the table as of the first pull.
func (s *secondary) rows(ctx context.Context) iter.Seq2[row, error] {
	return func(yield func(row, error) bool) {
		fail := func(err error) { yield(row{}, fmt.Errorf("memory: %s store: scan: %w", s.d.backend, err)) }
		if err := s.ready(ctx); err != nil {
			fail(err)
			return
		}
		if err := s.check("scan"); err != nil {
			fail(err)
			return
		}
		rows, err := s.db.QueryContext(ctx, s.scanQ)
		if err != nil {
			fail(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var r row
			var m memory.Memory
			var content, contentHash, createdAt, witnessHash, recordHash string
			if err := rows.Scan(&r.id, &m.NodeID, &content, &contentHash, &createdAt, &m.Witness.BlockIndex, &witnessHash, &recordHash, &r.origin); err != nil {
				fail(err)
				return
			}
			r.hash = rowHash(r.id, m, content, contentHash, createdAt, witnessHash, recordHash)
			if !yield(r, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	}
}

// rowHash recomputes the record hash of a row from its columns, so that a
// column edited behind the store's back shows as a mismatch even when
// record_hash was left alone. It returns zero for a row that does not
// decode or whose record_hash column disagrees.
func rowHash(id string, m memory.Memory, content, contentHash, createdAt, witnessHash, recordHash string) ledger.Hash {
	var err error
	m.ID, m.Content = id, []byte(content)
	m.CreatedAt, err = memory.ParseCreatedAt(createdAt)
	errs := []error{err, m.ContentHash.UnmarshalText([]byte(contentHash)), m.Witness.BlockHash.UnmarshalText([]byte(witnessHash))}
	if errors.Join(errs...) != nil {
		return ledger.Hash{}
	}
	h, err := m.Hash()
	if err != nil || h.String() != recordHash {
		return ledger.Hash{}
	}
	return h
}

// count returns the number of rows this replica wrote.
func (s *secondary) count(ctx context.Context) (int64, error) {
	if err := s.ready(ctx); err != nil {
		return 0, err
	}
	if err := s.check("count"); err != nil {
		return 0, err
	}
	var n int64
	err := s.db.QueryRowContext(ctx, s.countQ, s.origin).Scan(&n)
	return n, err
}
