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
	"log/slog"
	"os"
	"path/filepath"
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

	mu      sync.Mutex
	f       *os.File
	records []eval.Record // within the longest compliance window, oldest first
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
		good += int64(len(line))
		if !rec.Time.Before(cutoff) {
			j.records = append(j.records, rec)
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
	data, err := json.Marshal(rec) // before the lock, which concurrent requests wait for
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("journal: closed")
	}
	if _, err := j.f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.records = append(j.records, rec)
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
	return eval.Compliance(j.records, from, to), nil
}

// forget drops the records older than cutoff (records arrive in time
// order, so they are a prefix).
func (j *Journal) forget(cutoff time.Time) {
	i := 0
	for i < len(j.records) && j.records[i].Time.Before(cutoff) {
		i++
	}
	if i > 0 {
		j.records = append(j.records[:0], j.records[i:]...)
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
