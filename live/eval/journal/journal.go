// Package journal persists the evaluator's records (eval.Record: hashes
// and identifiers, never text) as JSON lines in one append-only file, and
// answers compliance and telemetry from them.
//
//	j, err := journal.Open("data/eval/records.jsonl", nil)
//	ev, err := eval.New(eval.Options{Data: data, Recorder: j})
//	report, err := j.Compliance(24)
//	t := j.Telemetry()
//
// Open replays the file, so compliance and telemetry survive a restart. A
// last line cut short by a crash is dropped (and cut from the file) with a
// log line; any other unreadable line is an error naming it.
package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/proofsite/proofsite/live/eval"
)

// ErrCorrupt marks a journal line that is not a record.
var ErrCorrupt = errors.New("journal: corrupt")

// Options configure Open; the zero value is usable.
type Options struct {
	Now    func() time.Time // the clock; nil means time.Now
	Logger *slog.Logger     // nil discards
}

// Journal is an append-only file of records with their compliance and
// telemetry views. Safe for concurrent use.
type Journal struct {
	opts Options
	agg  *eval.Aggregator

	mu     sync.Mutex
	f      *os.File
	window []entry // the records within the longest compliance window, oldest first
	names  names   // what the entries' indexes stand for
	line   []byte  // the record being written
}

// entry is what compliance reads of a record, without a pointer: the
// window keeps one per record for eval.MaxComplianceHours, 16 bytes that
// the garbage collector never scans, where the record itself (its fields
// and its input hash) kept 284 (18 against 284 retained bytes a record,
// 100,000 records). At thousands of evaluations a second that was
// megabytes a second, for 30 days.
type entry struct {
	time       int64  // Unix nanoseconds
	categories uint32 // bit i: names.categories[i]
	flags      uint16 // how many flag ids, at most math.MaxUint16
	kind       uint8  // index in names.kinds
	decision   uint8  // index in names.decisions
}

// names intern the kinds, decisions and categories that entries hold by
// index, in order of first appearance.
type names struct {
	kinds      []eval.RecordKind
	decisions  []eval.Decision
	categories []eval.Category
}

// errTooManyNames: more distinct kinds, decisions or categories than an
// entry has room for (eval has 3, 3 and 9).
var errTooManyNames = errors.New("journal: too many distinct kinds, decisions or categories")

// index returns v's index in *list, adding it if new, or false when the
// list is full (max entries).
func index[T comparable](list *[]T, v T, max int) (int, bool) {
	if i := slices.Index(*list, v); i >= 0 {
		return i, true
	}
	if len(*list) == max {
		return 0, false
	}
	*list = append(*list, v)
	return len(*list) - 1, true
}

// compact makes rec's entry.
func (n *names) compact(rec eval.Record) (entry, error) {
	e := entry{time: rec.Time.UnixNano(), flags: uint16(min(len(rec.FlagIDs), math.MaxUint16))}
	k, okK := index(&n.kinds, rec.Kind, math.MaxUint8+1)
	d, okD := index(&n.decisions, rec.Decision, math.MaxUint8+1)
	e.kind, e.decision = uint8(k), uint8(d)
	ok := okK && okD
	for _, c := range rec.Categories {
		i, okC := index(&n.categories, c, 32)
		ok = ok && okC
		e.categories |= 1 << i
	}
	if !ok {
		return entry{}, errTooManyNames
	}
	return e, nil
}

// records yields what compliance reads of each entry, as a record, in the
// same memory: its FlagIDs are blanks that only count.
func (n *names) records(entries []entry) iter.Seq[eval.Record] {
	return func(yield func(eval.Record) bool) {
		var r eval.Record
		var blanks []string
		for _, e := range entries {
			if int(e.flags) > len(blanks) {
				blanks = make([]string, e.flags)
			}
			r = eval.Record{Kind: n.kinds[e.kind], Decision: n.decisions[e.decision], Time: time.Unix(0, e.time),
				Categories: r.Categories[:0], FlagIDs: blanks[:e.flags]}
			for i, c := range n.categories {
				if e.categories&(1<<i) != 0 {
					r.Categories = append(r.Categories, c)
				}
			}
			if !yield(r) {
				return
			}
		}
	}
}

// Open opens (or creates) the journal at path and replays it.
func Open(path string, opts Options) (*Journal, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	j := &Journal{opts: opts, agg: eval.NewAggregator(), f: f}
	if err := j.replay(path); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// replay reads every line, keeps the records of the compliance window and
// feeds the telemetry, then leaves the file positioned at its end.
func (j *Journal) replay(path string) error {
	cutoff := j.opts.Now().Add(-eval.MaxComplianceHours * time.Hour)
	r := bufio.NewReader(j.f)
	var good int64
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 { // a torn last write
				j.opts.Logger.Warn("journal: dropping a record cut short", "file", path, "line", n, "bytes", len(line))
				if err := j.f.Truncate(good); err != nil {
					return fmt.Errorf("journal: %s: %w", path, err)
				}
			}
			break
		}
		if err != nil {
			return fmt.Errorf("journal: %s: %w", path, err)
		}
		var rec eval.Record
		if err := json.Unmarshal(bytes.TrimSuffix(line, []byte("\n")), &rec); err != nil || rec.Kind == "" || rec.Time.IsZero() {
			return fmt.Errorf("%w: %s line %d is not a record", ErrCorrupt, path, n)
		}
		e, err := j.names.compact(rec)
		if err != nil {
			return fmt.Errorf("%w: %s line %d", err, path, n)
		}
		good += int64(len(line))
		if !rec.Time.Before(cutoff) {
			j.window = append(j.window, e)
		}
		j.agg.Add(rec)
	}
	if _, err := j.f.Seek(good, io.SeekStart); err != nil {
		return fmt.Errorf("journal: %s: %w", path, err)
	}
	return nil
}

// Record appends one record (eval.Recorder).
func (j *Journal) Record(_ context.Context, rec eval.Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("journal: closed")
	}
	e, err := j.names.compact(rec)
	if err != nil {
		return err
	}
	line, err := rec.AppendJSON(j.line[:0]) // as json.Marshal writes it, in less time than the lock is waited for
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.line = append(line, '\n')
	if _, err := j.f.Write(j.line); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.window = append(j.window, e)
	j.agg.Add(rec)
	return nil
}

// Compliance reports the records of the last hours (1 to
// eval.MaxComplianceHours; otherwise an error matching
// eval.ErrHoursOutOfRange).
func (j *Journal) Compliance(hours int) (eval.ComplianceReport, error) {
	from, to, err := eval.ComplianceWindow(hours, j.opts.Now())
	if err != nil {
		return eval.ComplianceReport{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.forget(to.Add(-eval.MaxComplianceHours * time.Hour))
	return eval.Compliance(j.names.records(j.window), from, to), nil
}

// forget drops the entries older than cutoff (records arrive in time
// order, so they are a prefix).
func (j *Journal) forget(cutoff time.Time) {
	i := 0
	for i < len(j.window) && j.window[i].time < cutoff.UnixNano() {
		i++
	}
	if i > 0 {
		j.window = append(j.window[:0], j.window[i:]...)
	}
}

// Telemetry is the live view as of now.
func (j *Journal) Telemetry() eval.Telemetry { return j.agg.Snapshot(j.opts.Now()) }

// Close syncs and closes the file.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Sync()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f = nil
	return err
}
