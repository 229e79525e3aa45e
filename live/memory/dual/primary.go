package dual

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/proofsite/proofsite/live/memory"

	"github.com/dgraph-io/badger/v4"
)

// primaryFormat is stored under keyFormat; a directory with another value
// is not opened.
const primaryFormat = "proofsite-memory-primary/1"

// Badger keys of the primary store. No other file reads them.
const (
	prefixMemory = "m/" // m/<id> -> the memory's canonical JSON
	prefixNode   = "n/" // n/<node>/<created_at>/<id> -> empty (a node's memories in time order)
	prefixOutbox = "o/" // o/<id> -> enqueue time (unix ns, 8 bytes big-endian): not yet in the SQL store
	keyFormat    = "meta/format"
	keyOrigin    = "meta/origin"    // this primary's id, 32 hex digits, drawn at creation
	keyReconcile = "meta/reconcile" // the last reconciliation memory.Report, JSON
)

func memoryKey(id string) []byte { return []byte(prefixMemory + id) }
func outboxKey(id string) []byte { return []byte(prefixOutbox + id) }
func nodeKey(m memory.Memory) []byte {
	return []byte(prefixNode + m.NodeID + "/" + memory.FormatCreatedAt(m.CreatedAt) + "/" + m.ID)
}

// primary is the Badger store that holds every memory first, with the
// transactional outbox of memories not yet copied to the SQL store.
type primary struct {
	db     *badger.DB
	origin string
	count  atomic.Int64 // memories stored, counted at open and kept current
}

func openPrimary(dir string, log *slog.Logger) (*primary, error) {
	opts := badger.DefaultOptions(dir).
		WithSyncWrites(true). // a memory and its outbox entry are durable before Put goes on
		WithLogger(badgerLogger{log.With("component", "badger")}).
		WithNumVersionsToKeep(1).
		WithMemTableSize(16 << 20).
		WithValueLogFileSize(64 << 20).
		WithBlockCacheSize(16 << 20).
		WithIndexCacheSize(8 << 20).
		WithNumCompactors(2)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("memory: open primary store %s: %w", dir, err)
	}
	p := &primary{db: db}
	if err := p.init(); err != nil {
		db.Close()
		return nil, err
	}
	return p, nil
}

// init checks or writes the format and origin, and counts the memories.
func (p *primary) init() error {
	err := p.db.Update(func(txn *badger.Txn) error {
		format, err := getValue(txn, []byte(keyFormat))
		if errors.Is(err, badger.ErrKeyNotFound) {
			var o [16]byte
			rand.Read(o[:])
			if err := txn.Set([]byte(keyOrigin), []byte(hex.EncodeToString(o[:]))); err != nil {
				return err
			}
			return txn.Set([]byte(keyFormat), []byte(primaryFormat))
		}
		if err != nil {
			return err
		}
		if string(format) != primaryFormat {
			return fmt.Errorf("%w: primary store format %q, want %q", memory.ErrCorrupt, format, primaryFormat)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("memory: primary store: %w", err)
	}
	return p.db.View(func(txn *badger.Txn) error {
		origin, err := getValue(txn, []byte(keyOrigin))
		if err != nil {
			return fmt.Errorf("%w: origin: %w", memory.ErrCorrupt, err)
		}
		p.origin = string(origin)
		n, err := countPrefix(txn, prefixMemory)
		p.count.Store(n)
		return err
	})
}

func (p *primary) close() error { return p.db.Close() }

// get returns the memory with id, or ErrNotFound.
func (p *primary) get(id string) (memory.Memory, error) {
	var m memory.Memory
	err := p.db.View(func(txn *badger.Txn) (err error) {
		m, err = getMemory(txn, id)
		return err
	})
	return m, err
}

// insert writes m with its node index entry and its outbox entry in one
// synced transaction. It refuses an id that is already stored (Put checks
// first and serialises Puts of one id, so this is a safeguard).
func (p *primary) insert(m memory.Memory, now time.Time) error {
	data, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	err = p.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(memoryKey(m.ID)); !errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("already stored (%v)", err)
		}
		for _, kv := range [][2][]byte{
			{memoryKey(m.ID), data},
			{nodeKey(m), nil},
			{outboxKey(m.ID), binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano()))},
		} {
			if err := txn.Set(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("memory: primary store: write %s: %w", m.ID, err)
	}
	p.count.Add(1)
	return nil
}

// pending reports whether id has an outbox entry.
func (p *primary) pending(id string) (bool, error) {
	err := p.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(outboxKey(id))
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// outbox returns up to limit ids with an outbox entry, in id order,
// starting after the id after ("" for the first).
func (p *primary) outbox(after string, limit int) ([]string, error) {
	var ids []string
	err := p.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixOutbox)})
		defer it.Close()
		seek := outboxKey(after)
		for it.Seek(seek); it.Valid() && len(ids) < limit; it.Next() {
			id := string(it.Item().Key()[len(prefixOutbox):])
			if id != after {
				ids = append(ids, id)
			}
		}
		return nil
	})
	return ids, err
}

// backlog returns the number of outbox entries and the enqueue time of the
// oldest (zero when there is none). It reads every entry: the outbox is
// empty but for the memories the SQL store has not received yet.
func (p *primary) backlog() (int64, time.Time, error) {
	var n int64
	var oldest time.Time
	err := p.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixOutbox)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
			err := it.Item().Value(func(v []byte) error {
				if len(v) != 8 {
					return fmt.Errorf("%w: outbox entry %s", memory.ErrCorrupt, it.Item().Key())
				}
				if t := time.Unix(0, int64(binary.BigEndian.Uint64(v))); oldest.IsZero() || t.Before(oldest) {
					oldest = t
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return n, oldest.UTC(), err
}

// ack deletes the outbox entries of ids (those that exist).
func (p *primary) ack(ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	err := p.db.Update(func(txn *badger.Txn) error {
		for _, id := range ids {
			if err := txn.Delete(outboxKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("memory: primary store: acknowledge outbox: %w", err)
	}
	return nil
}

// list returns up to limit memories of node, newest first.
func (p *primary) list(ctx context.Context, node string, limit int) ([]memory.Memory, error) {
	out := []memory.Memory{}
	err := p.db.View(func(txn *badger.Txn) error {
		prefix := []byte(prefixNode + node + "/")
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true})
		defer it.Close()
		for it.Seek(append(prefix, 0xff)); it.Valid() && len(out) < limit; it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			key := string(it.Item().Key())
			m, err := getMemory(txn, key[strings.LastIndexByte(key, '/')+1:])
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory: primary store: list %s: %w", node, err)
	}
	return out, nil
}

// scan calls fn with every stored memory in id order, read from one
// snapshot; a record that does not decode comes with its id and the error.
func (p *primary) scan(ctx context.Context, fn func(id string, m memory.Memory, err error) error) error {
	return p.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefixMemory), PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			m, err := decodeMemory(it.Item())
			if err := fn(string(it.Item().Key()[len(prefixMemory):]), m, err); err != nil {
				return err
			}
		}
		return nil
	})
}

// healthy reports whether the store answers a read.
func (p *primary) healthy() error {
	return p.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get([]byte(keyFormat))
		return err
	})
}

// saveReport and loadReport keep the last reconciliation across restarts.
func (p *primary) saveReport(r memory.Report) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return p.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(keyReconcile), data) })
}

func (p *primary) loadReport() (*memory.Report, error) {
	var r *memory.Report
	err := p.db.View(func(txn *badger.Txn) error {
		v, err := getValue(txn, []byte(keyReconcile))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		r = new(memory.Report)
		return json.Unmarshal(v, r)
	})
	return r, err
}

func getMemory(txn *badger.Txn, id string) (memory.Memory, error) {
	item, err := txn.Get(memoryKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return memory.Memory{}, fmt.Errorf("%w: %s", memory.ErrNotFound, id)
	}
	if err != nil {
		return memory.Memory{}, err
	}
	return decodeMemory(item)
}

func decodeMemory(item *badger.Item) (memory.Memory, error) {
	var m memory.Memory
	err := item.Value(func(v []byte) error { return m.UnmarshalJSON(v) })
	if err != nil {
		return memory.Memory{}, fmt.Errorf("%w: key %s: %w", memory.ErrCorrupt, item.Key(), err)
	}
	return m, nil
}

func getValue(txn *badger.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

func countPrefix(txn *badger.Txn, prefix string) (int64, error) {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix)})
	defer it.Close()
	var n int64
	for it.Rewind(); it.Valid(); it.Next() {
		n++
	}
	return n, nil
}

// badgerLogger sends Badger's logs to slog; Badger's info is our debug.
type badgerLogger struct{ l *slog.Logger }

// Errorf logs at error level.
func (b badgerLogger) Errorf(f string, a ...any) { b.l.Error(strings.TrimSpace(fmt.Sprintf(f, a...))) }

// Warningf logs at warning level.
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warn(strings.TrimSpace(fmt.Sprintf(f, a...))) }

// Infof logs at debug level: Badger is chatty.
func (b badgerLogger) Infof(f string, a ...any) { b.l.Debug(strings.TrimSpace(fmt.Sprintf(f, a...))) }

// Debugf logs at debug level.
func (b badgerLogger) Debugf(f string, a ...any) { b.l.Debug(strings.TrimSpace(fmt.Sprintf(f, a...))) }
