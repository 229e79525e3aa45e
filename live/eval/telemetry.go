package eval

import (
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"
)

// Telemetry windows.
const (
	telemetryHours = 24 // hourly categories cover the last day
	telemetryDays  = 7  // flags and certifications cover the last week
	recentFlags    = 20 // recent flag details kept
)

// Aggregator folds Records into the live telemetry (GET /api/v1/telemetry).
// It holds counts per hour for the last seven days and the details of the
// last flagged records; it never sees text. It is fed by Add (the route
// layer passes it every Record it keeps, and may replay persisted ones at
// start-up) and read by Snapshot; it reads no clock. Safe for concurrent use.
type Aggregator struct {
	mu      sync.Mutex
	hours   map[int64]*hourCounts // by hour (Unix seconds / 3600)
	recent  []FlagDetail          // newest last, at most recentFlags
	lastRun time.Time             // latest record with an entropy result
	last    EngineStatus
}

// hourCounts is one hour's totals.
type hourCounts struct {
	checks, flagged, flags, certifications, partial int
	categories                                      map[Category]int
}

// NewAggregator returns an empty Aggregator.
func NewAggregator() *Aggregator { return &Aggregator{hours: map[int64]*hourCounts{}} }

// Add counts one record.
func (a *Aggregator) Add(r Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := r.Time.Unix() / 3600
	c := a.hours[h]
	if c == nil {
		c = &hourCounts{categories: map[Category]int{}}
		a.hours[h] = c
	}
	if r.Kind == KindCertify {
		c.certifications++
		return
	}
	c.checks++
	for _, cat := range r.Categories {
		c.categories[cat]++
	}
	if len(r.Categories) > 0 {
		c.flagged++
		c.flags += len(r.FlagIDs)
		a.recent = append(a.recent, FlagDetail{Time: r.Time.UTC(), Kind: r.Kind, InputRef: ref(r.InputSHA256),
			Categories: slices.Clone(r.Categories), FlagIDs: slices.Clone(r.FlagIDs), Decision: r.Decision})
		slices.SortStableFunc(a.recent, func(x, y FlagDetail) int { return x.Time.Compare(y.Time) })
		if len(a.recent) > recentFlags {
			a.recent = a.recent[len(a.recent)-recentFlags:]
		}
	}
	if r.Entropy == EnginePartial {
		c.partial++
	}
	if r.Entropy != "" && !r.Time.Before(a.lastRun) {
		a.lastRun, a.last = r.Time, r.Entropy
	}
}

// ref is the short reference to an input hash that telemetry shows.
func ref(sha string) string { return sha[:min(len(sha), 16)] }

// Telemetry is the live view of the evaluator's activity.
type Telemetry struct {
	Hourly        []HourCategories `json:"hourly_categories"` // the last 24 hours, oldest first
	Daily         []DayTotals      `json:"daily"`             // the last 7 days, oldest first
	Flags7d       int              `json:"flags_7d"`
	Certs7d       int              `json:"certifications_7d"`
	Checks7d      int              `json:"checks_7d"`
	EntropyEngine EngineReport     `json:"entropy_engine"`
	RecentFlags   []FlagDetail     `json:"recent_flags"` // newest first; no text
}

// HourCategories is one hour's checks and the categories they raised.
type HourCategories struct {
	Hour       time.Time        `json:"hour"`
	Checks     int              `json:"checks"`
	Categories map[Category]int `json:"categories"`
}

// DayTotals is one day's (UTC) totals.
type DayTotals struct {
	Day            string `json:"day"` // YYYY-MM-DD
	Checks         int    `json:"checks"`
	Flags          int    `json:"flags"`
	Certifications int    `json:"certifications"`
}

// EngineReport is the entropy engine's status over the last day.
type EngineReport struct {
	Status      EngineStatus `json:"status"` // of the latest run, or idle when none in 24 h
	LastRun     *time.Time   `json:"last_run"`
	Runs24h     int          `json:"runs_24h"`
	Partial24h  int          `json:"partial_24h"` // runs that read only part of their text
	Description string       `json:"description"`
}

// FlagDetail is one flagged record, without its text.
type FlagDetail struct {
	Time       time.Time  `json:"time"`
	Kind       RecordKind `json:"kind"`
	InputRef   string     `json:"input_ref"` // the first 16 hex digits of the input's SHA-256
	Categories []Category `json:"categories"`
	FlagIDs    []string   `json:"flag_ids"`
	Decision   Decision   `json:"decision"`
}

// Snapshot returns the telemetry as of now, and forgets hours older than
// seven days.
func (a *Aggregator) Snapshot(now time.Time) Telemetry {
	a.mu.Lock()
	defer a.mu.Unlock()
	now = now.UTC()
	cur := now.Unix() / 3600
	oldest := cur - telemetryDays*24 + 1
	for h := range a.hours {
		if h < oldest {
			delete(a.hours, h)
		}
	}
	t := Telemetry{Hourly: make([]HourCategories, 0, telemetryHours), RecentFlags: []FlagDetail{}}
	for h := cur - telemetryHours + 1; h <= cur; h++ {
		hc := HourCategories{Hour: time.Unix(h*3600, 0).UTC(), Categories: map[Category]int{}}
		if c := a.hours[h]; c != nil {
			hc.Checks = c.checks
			for k, v := range c.categories {
				hc.Categories[k] = v
			}
			t.EntropyEngine.Runs24h += c.checks
			t.EntropyEngine.Partial24h += c.partial
		}
		t.Hourly = append(t.Hourly, hc)
	}
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	for d := telemetryDays - 1; d >= 0; d-- {
		day := today.AddDate(0, 0, -d)
		dt := DayTotals{Day: day.Format(time.DateOnly)}
		for h := day.Unix() / 3600; h < day.Unix()/3600+24 && h <= cur; h++ {
			if c := a.hours[h]; c != nil && h >= oldest {
				dt.Checks += c.checks
				dt.Flags += c.flags
				dt.Certifications += c.certifications
			}
		}
		t.Daily = append(t.Daily, dt)
	}
	for h, c := range a.hours {
		if h <= cur {
			t.Flags7d += c.flags
			t.Certs7d += c.certifications
			t.Checks7d += c.checks
		}
	}
	for i := len(a.recent) - 1; i >= 0; i-- {
		if !a.recent[i].Time.After(now) {
			t.RecentFlags = append(t.RecentFlags, a.recent[i])
		}
	}
	t.EntropyEngine = a.engine(now, t.EntropyEngine)
	return t
}

// engine completes the entropy engine's report.
func (a *Aggregator) engine(now time.Time, e EngineReport) EngineReport {
	if a.lastRun.IsZero() || now.Sub(a.lastRun) > telemetryHours*time.Hour {
		e.Status = EngineIdle
		e.Description = "No evaluation in the last 24 hours; the engine runs in-process with every evaluation."
	} else {
		e.Status = a.last
		last := a.lastRun.UTC()
		e.LastRun = &last
		e.Description = fmt.Sprintf("Shannon entropy by window, compression ratio, repetition and script mixing, run in-process on every evaluation; %d runs in the last 24 hours.", e.Runs24h)
	}
	return e
}

// MaxComplianceHours is the longest compliance window (30 days).
const MaxComplianceHours = 720

// ComplianceReport summarises the checks of a window (GET /api/v1/compliance).
type ComplianceReport struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Hours int       `json:"hours"`
	// TotalChecks counts evaluate and govern records; Compliant those whose
	// decision was allow.
	TotalChecks int `json:"total_checks"`
	Compliant   int `json:"compliant"`
	// ComplianceRate is Compliant over TotalChecks, or null when there
	// were no checks (a rate of nothing is not 100%).
	ComplianceRate *float64           `json:"compliance_rate"`
	Flags          int                `json:"flags"`
	FlaggedChecks  int                `json:"flagged_checks"`
	Certifications int                `json:"certifications"`
	ByCategory     map[Category]int   `json:"by_category"` // checks that raised each category
	ByDecision     map[Decision]int   `json:"by_decision"`
	ByKind         map[RecordKind]int `json:"by_kind"`
}

// ComplianceWindow returns the window of the last hours ending at now, or
// an error matching ErrHoursOutOfRange when hours is not 1 to
// MaxComplianceHours.
func ComplianceWindow(hours int, now time.Time) (from, to time.Time, err error) {
	if hours < 1 || hours > MaxComplianceHours {
		return time.Time{}, time.Time{}, fmt.Errorf("%w: hours must be 1 to %d, not %d", ErrHoursOutOfRange, MaxComplianceHours, hours)
	}
	to = now.UTC()
	return to.Add(-time.Duration(hours) * time.Hour), to, nil
}

// Compliance summarises the records whose time is in [from, to). It keeps
// none of them (a journal may yield each from a compact form into the same
// memory).
func Compliance(records iter.Seq[Record], from, to time.Time) ComplianceReport {
	r := ComplianceReport{From: from.UTC(), To: to.UTC(), Hours: int(to.Sub(from) / time.Hour),
		ByCategory: map[Category]int{}, ByDecision: map[Decision]int{}, ByKind: map[RecordKind]int{}}
	for _, d := range Decisions {
		r.ByDecision[d] = 0
	}
	for rec := range records {
		if rec.Time.Before(from) || !rec.Time.Before(to) {
			continue
		}
		r.ByKind[rec.Kind]++
		if rec.Kind == KindCertify {
			r.Certifications++
			continue
		}
		r.TotalChecks++
		r.ByDecision[rec.Decision]++
		if rec.Decision == Allow {
			r.Compliant++
		}
		if len(rec.Categories) > 0 {
			r.FlaggedChecks++
			r.Flags += len(rec.FlagIDs)
		}
		for _, c := range rec.Categories {
			r.ByCategory[c]++
		}
	}
	if r.TotalChecks > 0 {
		rate := round3(float64(r.Compliant) / float64(r.TotalChecks))
		r.ComplianceRate = &rate
	}
	return r
}
