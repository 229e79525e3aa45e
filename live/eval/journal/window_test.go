package journal

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/proofsite/proofsite/live/eval"
)

// TestComplianceAsFromRecords: the compact window answers compliance as
// eval.Compliance does over the full records, for every window, before
// and after a restart.
func TestComplianceAsFromRecords(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "records.jsonl")
	j, err := Open(path, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []eval.RecordKind{eval.KindEvaluate, eval.KindGovern, eval.KindCertify}
	var recs []eval.Record
	for i := range 2000 { // oldest first, from 800 hours ago to now
		rec := eval.Record{Kind: kinds[rng.IntN(len(kinds))], InputSHA256: "ab", Decision: eval.Decisions[rng.IntN(len(eval.Decisions))],
			Categories: []eval.Category{}, FlagIDs: []string{}, Time: now.Add(-800 * time.Hour).Add(time.Duration(i) * 24 * time.Minute)}
		for _, c := range eval.Categories {
			if rng.IntN(4) == 0 {
				rec.Categories = append(rec.Categories, c)
				rec.FlagIDs = append(rec.FlagIDs, string(c)+"-01", string(c)+"-02")
			}
		}
		recs = append(recs, rec)
		if err := j.Record(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	check := func(j *Journal) {
		t.Helper()
		for _, hours := range []int{1, 2, 24, 100, 399, 400, 401, 720} {
			got, err := j.Compliance(hours)
			if err != nil {
				t.Fatal(err)
			}
			from, to, _ := eval.ComplianceWindow(hours, now)
			if want := eval.Compliance(slices.Values(recs), from, to); !reflect.DeepEqual(got, want) {
				t.Errorf("%d hours:\n got %+v\nwant %+v", hours, got, want)
			}
		}
	}
	check(j)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if j, err = Open(path, Options{Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	check(j)
}
