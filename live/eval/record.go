package eval

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// RecordKind says which operation a Record comes from.
type RecordKind string

// The record kinds.
const (
	KindEvaluate RecordKind = "evaluate"
	KindGovern   RecordKind = "govern"
	KindCertify  RecordKind = "certify" // written by the certify route, counted by telemetry
)

// Record is what is kept of one evaluation: hashes and identifiers, never
// the text.
type Record struct {
	Kind         RecordKind   `json:"kind"`
	InputSHA256  string       `json:"input_sha256"`
	OutputSHA256 string       `json:"output_sha256,omitempty"` // govern and certify: the response's hash
	Categories   []Category   `json:"categories"`
	FlagIDs      []string     `json:"flag_ids"`
	Decision     Decision     `json:"decision"`
	Score        int          `json:"score"`
	Entropy      EngineStatus `json:"entropy_status"`
	StageErrors  []string     `json:"stage_errors,omitempty"` // names of the stages that failed
	Time         time.Time    `json:"time"`
}

// AppendJSON appends the record as encoding/json.Marshal encodes it, byte
// for byte, without reflection (TestReportAppendJSON): the journal writes
// one a request.
func (r *Record) AppendJSON(b []byte) ([]byte, error) {
	if y := r.Time.Year(); y < 0 || y > 9999 {
		return b, errJSONValue
	}
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, string(r.Kind), true)
	b = append(b, `,"input_sha256":`...)
	b = appendJSONString(b, r.InputSHA256, true)
	if r.OutputSHA256 != "" {
		b = append(b, `,"output_sha256":`...)
		b = appendJSONString(b, r.OutputSHA256, true)
	}
	b = append(b, `,"categories":`...)
	b = appendJSONStrings(b, r.Categories, true)
	b = append(b, `,"flag_ids":`...)
	b = appendJSONStrings(b, r.FlagIDs, true)
	b = append(b, `,"decision":`...)
	b = appendJSONString(b, string(r.Decision), true)
	b = append(b, `,"score":`...)
	b = strconv.AppendInt(b, int64(r.Score), 10)
	b = append(b, `,"entropy_status":`...)
	b = appendJSONString(b, string(r.Entropy), true)
	if len(r.StageErrors) > 0 {
		b = append(b, `,"stage_errors":`...)
		b = appendJSONStrings(b, r.StageErrors, true)
	}
	b = append(b, `,"time":`...)
	b = appendTime(b, r.Time)
	return append(b, '}'), nil
}

// Recorder keeps records (the persistence layer implements it).
type Recorder interface {
	Record(ctx context.Context, r Record) error
}

// record makes the Record of a report.
func (e *Evaluator) record(kind RecordKind, r Report) Record {
	rec := Record{Kind: kind, InputSHA256: r.Input.SHA256, Categories: r.Categories, FlagIDs: make([]string, 0, len(r.Flags)),
		Decision: r.Decision, Score: r.Score, Entropy: r.Entropy.Status, Time: r.EvaluatedAt}
	for _, f := range r.Flags {
		rec.FlagIDs = append(rec.FlagIDs, f.ID)
	}
	for _, st := range r.Stages {
		if st.Status == StatusError {
			rec.StageErrors = append(rec.StageErrors, st.Name)
		}
	}
	return rec
}

// keep counts the record and hands it to the Recorder; a failure is
// reported on the explain stage and returned as ErrRecord.
func (e *Evaluator) keep(ctx context.Context, r *Report, rec Record) error {
	e.counters.add(rec)
	if e.opts.Recorder == nil {
		return nil
	}
	if err := e.opts.Recorder.Record(ctx, rec); err != nil {
		err = fmt.Errorf("%w: %w", ErrRecord, err)
		if st := &r.Stages[len(r.Stages)-1]; st.Name == StageExplain {
			st.Status, st.Error = StatusError, err.Error()
		}
		e.log.Error("eval: record failed", "err", err)
		return err
	}
	return nil
}

// Counters are the evaluator's running totals since it started.
type Counters struct {
	Evaluations int64                  `json:"evaluations"`
	Governs     int64                  `json:"governs"`
	Decisions   map[Decision]int64     `json:"decisions"`
	Categories  map[Category]int64     `json:"categories"` // evaluations that raised each category
	StageErrors map[string]int64       `json:"stage_errors"`
	Entropy     map[EngineStatus]int64 `json:"entropy"`
}

// counters is Counters kept with atomics.
type counters struct {
	evaluations, governs atomic.Int64
	decisions            [len(Decisions)]atomic.Int64
	categories           [len(Categories)]atomic.Int64
	stageErrors          [len(StageNames)]atomic.Int64
	entropyPartial       atomic.Int64
}

func (c *counters) add(rec Record) {
	if rec.Kind == KindGovern {
		c.governs.Add(1)
	} else {
		c.evaluations.Add(1)
	}
	c.decisions[rec.Decision.rank()].Add(1)
	for _, cat := range rec.Categories {
		c.categories[cat.index()].Add(1)
	}
	for _, name := range rec.StageErrors {
		for i, s := range StageNames {
			if s == name {
				c.stageErrors[i].Add(1)
			}
		}
	}
	if rec.Entropy == EnginePartial {
		c.entropyPartial.Add(1)
	}
}

// Counters returns the running totals.
func (e *Evaluator) Counters() Counters {
	c := &e.counters
	out := Counters{Evaluations: c.evaluations.Load(), Governs: c.governs.Load(), Decisions: map[Decision]int64{},
		Categories: map[Category]int64{}, StageErrors: map[string]int64{}, Entropy: map[EngineStatus]int64{}}
	for i, d := range Decisions {
		out.Decisions[d] = c.decisions[i].Load()
	}
	for i, cat := range Categories {
		if n := c.categories[i].Load(); n > 0 {
			out.Categories[cat] = n
		}
	}
	for i, s := range StageNames {
		if n := c.stageErrors[i].Load(); n > 0 {
			out.StageErrors[s] = n
		}
	}
	partial := c.entropyPartial.Load()
	out.Entropy[EnginePartial] = partial
	out.Entropy[EngineOK] = out.Evaluations + out.Governs - partial
	return out
}
