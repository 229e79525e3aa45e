package journal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/eval"
)

// TestReplayAfterRestart: records survive a restart; a last line cut
// short by a crash is dropped and cut from the file; any other unreadable
// line is refused by name.
func TestReplayAfterRestart(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	path := filepath.Join(t.TempDir(), "eval", "records.jsonl")
	j, err := Open(path, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	recs := []eval.Record{
		{Kind: eval.KindEvaluate, InputSHA256: "aa", Categories: []eval.Category{eval.PromptInjection}, FlagIDs: []string{"PI-01"}, Decision: eval.Block, Time: now.Add(-2 * time.Hour)},
		{Kind: eval.KindGovern, InputSHA256: "bb", Categories: []eval.Category{}, FlagIDs: []string{}, Decision: eval.Allow, Time: now.Add(-time.Hour)},
		{Kind: eval.KindCertify, InputSHA256: "cc", Categories: []eval.Category{}, FlagIDs: []string{}, Decision: eval.Allow, Time: now.Add(-time.Minute)},
		{Kind: eval.KindEvaluate, InputSHA256: "dd", Categories: []eval.Category{}, FlagIDs: []string{}, Decision: eval.Allow, Time: now.Add(-800 * time.Hour)},
	}
	for _, r := range recs {
		if err := j.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	check := func(j *Journal) {
		t.Helper()
		c, err := j.Compliance(24)
		if err != nil {
			t.Fatal(err)
		}
		if c.TotalChecks != 2 || c.Compliant != 1 || c.Certifications != 1 || c.ByCategory[eval.PromptInjection] != 1 || *c.ComplianceRate != 0.5 {
			t.Errorf("compliance: %+v", c)
		}
		if tel := j.Telemetry(); tel.Checks7d != 2 || tel.Certs7d != 1 || len(tel.RecentFlags) != 1 {
			t.Errorf("telemetry: %+v", tel)
		}
		if _, err := j.Compliance(721); !errors.Is(err, eval.ErrHoursOutOfRange) {
			t.Errorf("hours 721: %v", err)
		}
	}
	check(j)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"kind":"evaluate","input_sha`) // a crash mid-write
	f.Close()

	j, err = Open(path, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	check(j)
	j.Close()
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the torn line was not cut")
	}

	os.WriteFile(path, append(before, "not json\n"...), 0o600)
	if _, err := Open(path, Options{Now: clock}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a corrupt line: %v", err)
	}
}
