package eval

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func rec(kind RecordKind, at time.Time, decision Decision, cats ...Category) Record {
	r := Record{Kind: kind, InputSHA256: fmt.Sprintf("%064x", at.Unix()), Decision: decision, Categories: cats, Entropy: EngineOK, Time: at}
	for _, c := range cats {
		r.FlagIDs = append(r.FlagIDs, "X-"+string(c))
	}
	return r
}

func TestCompliance(t *testing.T) {
	now := fixedNow
	records := []Record{
		rec(KindEvaluate, now.Add(-30*time.Minute), Allow),
		rec(KindEvaluate, now.Add(-2*time.Hour), Block, PromptInjection, Obfuscation),
		rec(KindGovern, now.Add(-3*time.Hour), Review, Secrets),
		rec(KindCertify, now.Add(-4*time.Hour), ""),
		rec(KindEvaluate, now.Add(-30*time.Hour), Block, Jailbreak), // outside 24 h
		rec(KindEvaluate, now.Add(time.Minute), Allow),              // in the future: outside
	}
	from, to, err := ComplianceWindow(24, now)
	if err != nil {
		t.Fatal(err)
	}
	r := Compliance(slices.Values(records), from, to)
	if r.TotalChecks != 3 || r.Compliant != 1 || r.Certifications != 1 || r.Flags != 3 || r.FlaggedChecks != 2 || r.Hours != 24 {
		t.Errorf("report %+v", r)
	}
	if r.ComplianceRate == nil || *r.ComplianceRate != 0.333 {
		t.Errorf("rate %v", r.ComplianceRate)
	}
	if r.ByCategory[PromptInjection] != 1 || r.ByCategory[Secrets] != 1 || r.ByCategory[Jailbreak] != 0 || r.ByDecision[Block] != 1 {
		t.Errorf("breakdown %v %v", r.ByCategory, r.ByDecision)
	}
	empty := Compliance(slices.Values([]Record(nil)), from, to)
	if empty.ComplianceRate != nil || empty.TotalChecks != 0 {
		t.Errorf("empty window %+v", empty)
	}
	for _, h := range []int{0, -1, 721} {
		if _, _, err := ComplianceWindow(h, now); !errors.Is(err, ErrHoursOutOfRange) {
			t.Errorf("hours %d: %v", h, err)
		}
	}
	if _, _, err := ComplianceWindow(720, now); err != nil {
		t.Errorf("720 hours: %v", err)
	}
}

func TestTelemetry(t *testing.T) {
	a := NewAggregator()
	now := fixedNow // 12:00 UTC
	if tel := a.Snapshot(now); tel.EntropyEngine.Status != EngineIdle || tel.Flags7d != 0 || len(tel.Hourly) != 24 || len(tel.Daily) != 7 {
		t.Fatalf("empty telemetry %+v", tel)
	}
	a.Add(rec(KindEvaluate, now.Add(-10*time.Minute), Block, PromptInjection))
	a.Add(rec(KindEvaluate, now.Add(-70*time.Minute), Allow))
	a.Add(rec(KindGovern, now.Add(-70*time.Minute), Review, Secrets, PersonalData))
	a.Add(rec(KindCertify, now.Add(-5*time.Hour), ""))
	a.Add(rec(KindEvaluate, now.Add(-3*24*time.Hour), Block, Jailbreak))
	a.Add(rec(KindEvaluate, now.Add(-8*24*time.Hour), Block, Jailbreak)) // older than a week
	tel := a.Snapshot(now)
	if tel.Flags7d != 4 || tel.Certs7d != 1 || tel.Checks7d != 4 {
		t.Errorf("7 days: flags %d certs %d checks %d", tel.Flags7d, tel.Certs7d, tel.Checks7d)
	}
	lastHour, prevHour := tel.Hourly[22], tel.Hourly[21] // 11:00 and 10:00; the current hour (12:00) is empty
	if lastHour.Checks != 1 || lastHour.Categories[PromptInjection] != 1 || prevHour.Checks != 2 || prevHour.Categories[Secrets] != 1 {
		t.Errorf("hourly %+v / %+v", prevHour, lastHour)
	}
	if tel.Daily[6].Day != "2026-11-23" || tel.Daily[6].Flags != 3 || tel.Daily[6].Certifications != 1 || tel.Daily[3].Flags != 1 {
		t.Errorf("daily %+v", tel.Daily)
	}
	if len(tel.RecentFlags) != 4 || tel.RecentFlags[0].FlagIDs[0] != "X-prompt_injection" || len(tel.RecentFlags[0].InputRef) != 16 {
		t.Errorf("recent %+v", tel.RecentFlags)
	}
	if tel.EntropyEngine.Status != EngineOK || tel.EntropyEngine.Runs24h != 3 || tel.EntropyEngine.LastRun == nil {
		t.Errorf("engine %+v", tel.EntropyEngine)
	}
	if later := a.Snapshot(now.Add(48 * time.Hour)); later.EntropyEngine.Status != EngineIdle {
		t.Errorf("engine two days later %+v", later.EntropyEngine)
	}
}
