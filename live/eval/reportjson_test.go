package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// stdJSON is a report as encoding/json writes it with HTML escaping off
// (huma's JSON format), without the Encoder's newline.
func stdJSON(t *testing.T, r *Report) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// TestReportAppendJSON holds Report.AppendJSON and Record.AppendJSON to
// encoding/json, byte for byte: on the report and record of every corpus text and of variants of some, and
// on reports that set every optional field, nil and empty slices and maps,
// and strings and numbers at every escaping and formatting rule.
func TestReportAppendJSON(t *testing.T) {
	e := newTestEvaluator(t, nil)
	check := func(name string, r *Report) {
		t.Helper()
		want, werr := stdJSON(t, r)
		got, gerr := r.AppendJSON(nil)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%s: error %v, encoding/json's %v", name, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%s: AppendJSON wrote\n%s\nencoding/json\n%s", name, got, want)
		}
	}
	texts := corpusTexts(t)
	for i, s := range texts {
		vs := []string{s}
		if i%50 == 0 {
			vs = append(vs, variants(s, texts[(i+1)%len(texts)])...)
		}
		for _, v := range vs {
			r, err := e.Evaluate(context.Background(), v)
			if err != nil {
				continue // refused input: no report
			}
			check("corpus text", &r)
			checkRecord(t, e.record(KindEvaluate, r))
		}
	}

	odd := "a\"b\\c\b\f\n\r\t\x00\x01\x1f\x7f <&> é \u2028 \u2029 \xff \xe2\x80 ✓ 😀"
	full := Report{
		Input: InputInfo{SHA256: "ab", Bytes: 3, Chars: -1}, Decision: Block, Score: 100, Compliant: true,
		Categories: []Category{}, Explanation: odd,
		Flags: []Flag{
			{ID: "PI-01", Title: odd, Category: PromptInjection, Severity: Critical, Source: SourcePrecheck, Article: 3, ArticleTitle: odd,
				Explanation: odd, Remediation: odd, Evidence: &Evidence{View: ViewBase64, Depth: 1, Offset: 2, Length: 3, Probability: 1e-7}},
			{ID: "AI-X", Evidence: &Evidence{Probability: 0.8571428571428571}},
			{ID: "none"},
		},
		Stages:    []Stage{{Name: StageIntake, Status: StatusError, DurationUS: 1 << 40, Error: odd}, {}},
		Normalise: NormaliseReport{Changed: true, Views: []ViewInfo{{Kind: ViewHex, Depth: 2, Bytes: 9}}, DecodeBounded: true},
		Entropy: EntropyReport{Status: EnginePartial, Entropy: 1e21, MaxWindowEntropy: 123456789.125, CompressionRatio: -0.000001,
			Repetition: 5e-324, Scripts: map[string]int{"Latin": 3, odd: 1, "": 0, "Cyrillic": 2}, ScriptMixing: math.Copysign(0, -1),
			Anomalies: []string{odd, ""}},
		AIScan: AIScanReport{Engine: EngineLexical, Scores: map[Category]float64{Jailbreak: 0.5, PromptInjection: 1, HarmfulContent: 1e-9},
			Judge: &JudgeReport{Status: StatusOK, Verdict: "attack", Categories: []Category{Jailbreak}, Confidence: 0.25, Reason: odd, Error: odd}},
		Patterns:    PatternSetInfo{Version: odd, Count: 52, Digest: "00"},
		EvaluatedAt: time.Date(2026, 11, 23, 23, 59, 58, 123456700, time.FixedZone("x", -5*3600)),
	}
	check("every field", &full)
	check("zero", &Report{})
	empty := Report{AIScan: AIScanReport{Scores: map[Category]float64{}, Judge: &JudgeReport{}}, Entropy: EntropyReport{Scripts: map[string]int{}, Anomalies: []string{}},
		Flags: []Flag{}, Stages: []Stage{}, Normalise: NormaliseReport{Views: []ViewInfo{}}, EvaluatedAt: time.Unix(0, 0).UTC()}
	check("empty", &empty)
	for _, bad := range []Report{
		{Entropy: EntropyReport{Entropy: math.NaN()}},
		{AIScan: AIScanReport{Scores: map[Category]float64{Jailbreak: math.Inf(1)}}},
		{EvaluatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		check("refused", &bad)
	}
	checkRecord(t, Record{Kind: KindGovern, InputSHA256: odd, OutputSHA256: "<&>", Categories: []Category{Jailbreak, "<"}, FlagIDs: []string{},
		Decision: Review, Score: -3, Entropy: EnginePartial, StageErrors: []string{odd}, Time: full.EvaluatedAt})
	checkRecord(t, Record{})
	checkRecord(t, Record{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)})
}

// checkRecord holds Record.AppendJSON to encoding/json.Marshal.
func checkRecord(t *testing.T, rec Record) {
	t.Helper()
	want, werr := json.Marshal(rec)
	got, gerr := rec.AppendJSON(nil)
	if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("record: AppendJSON wrote (%v)\n%s\nencoding/json (%v)\n%s", gerr, got, werr, want)
	}
}
