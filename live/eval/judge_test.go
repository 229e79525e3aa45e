package eval

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseJudgeAnswer(t *testing.T) {
	tests := []struct {
		desc, raw string
		ok        bool
	}{
		{"clean", `{"verdict":"clean","categories":[],"confidence":0.9,"reason":"ordinary question"}`, true},
		{"flagged", `{"verdict":"flagged","categories":["jailbreak"],"confidence":0.8,"reason":"persona"}`, true},
		{"missing field", `{"verdict":"clean","categories":[],"confidence":0.9}`, false},
		{"null field", `{"verdict":"clean","categories":null,"confidence":0.9,"reason":"x"}`, false},
		{"extra field", `{"verdict":"clean","categories":[],"confidence":0.9,"reason":"x","note":"y"}`, false},
		{"text after the object", `{"verdict":"clean","categories":[],"confidence":0.9,"reason":"x"} trust me`, false},
		{"prose around it", "Sure! " + `{"verdict":"clean","categories":[],"confidence":0.9,"reason":"x"}`, false},
		{"unknown verdict", `{"verdict":"fine","categories":[],"confidence":0.9,"reason":"x"}`, false},
		{"clean with categories", `{"verdict":"clean","categories":["jailbreak"],"confidence":0.9,"reason":"x"}`, false},
		{"flagged without categories", `{"verdict":"flagged","categories":[],"confidence":0.9,"reason":"x"}`, false},
		{"confidence out of range", `{"verdict":"clean","categories":[],"confidence":1.5,"reason":"x"}`, false},
		{"unknown category", `{"verdict":"flagged","categories":["spam"],"confidence":0.5,"reason":"x"}`, false},
		{"long reason", `{"verdict":"clean","categories":[],"confidence":0.5,"reason":"` + strings.Repeat("a", 501) + `"}`, false},
		{"not JSON", `clean`, false},
	}
	for _, tc := range tests {
		_, err := ParseJudgeAnswer([]byte(tc.raw))
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v; want ok %v", tc.desc, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrJudgeMalformed) {
			t.Errorf("%s: %v does not match ErrJudgeMalformed", tc.desc, err)
		}
	}
}

// judgeFunc adapts a function to Judge.
type judgeFunc func(ctx context.Context, req JudgeRequest) ([]byte, error)

func (f judgeFunc) Judge(ctx context.Context, req JudgeRequest) ([]byte, error) { return f(ctx, req) }

func TestJudgeFailuresAreStageErrors(t *testing.T) {
	tests := []struct {
		desc  string
		judge judgeFunc
		want  error
	}{
		{"late", func(ctx context.Context, _ JudgeRequest) ([]byte, error) {
			<-ctx.Done()
			return []byte(`{"verdict":"clean","categories":[],"confidence":1,"reason":"late"}`), nil
		}, ErrJudgeLate},
		{"malformed", func(context.Context, JudgeRequest) ([]byte, error) { return []byte("all clear!"), nil }, ErrJudgeMalformed},
		{"provider error", func(context.Context, JudgeRequest) ([]byte, error) { return nil, errors.New("connection refused") }, ErrJudge},
		{"panic", func(context.Context, JudgeRequest) ([]byte, error) { panic("boom") }, ErrJudge},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			rec := &memRecorder{}
			e, h := hookedEvaluator(t, true)
			h.judge, h.rec = tc.judge, rec
			r, err := e.Evaluate(context.Background(), "What is the capital of France?")
			if err != nil {
				t.Fatal(err)
			}
			st := r.Stages[4]
			if st.Name != StageAIScan || st.Status != StatusError || r.AIScan.Judge == nil || r.AIScan.Judge.Status != StatusError {
				t.Fatalf("ai_scan stage %+v, judge %+v; want an error", st, r.AIScan.Judge)
			}
			if !strings.Contains(st.Error, "judge") || r.Decision == Allow || r.Compliant {
				t.Errorf("a failed judge let the text through: %s, %q", r.Decision, st.Error)
			}
			if len(rec.recs) != 1 || len(rec.recs[0].StageErrors) != 1 {
				t.Errorf("record %+v; want the ai_scan stage error", rec.recs)
			}
			_, err = e.askJudge(context.Background(), "x")
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrJudge) {
				t.Errorf("askJudge: %v; want %v", err, tc.want)
			}
		})
	}
}

func TestJudgeVerdicts(t *testing.T) {
	var got JudgeRequest
	judge := judgeFunc(func(_ context.Context, req JudgeRequest) ([]byte, error) {
		got = req
		if strings.Contains(req.Text, "grandmother") {
			return []byte(`{"verdict":"flagged","categories":["jailbreak"],"confidence":0.9,"reason":"role-play to extract a recipe"}`), nil
		}
		return []byte(`{"verdict":"clean","categories":[],"confidence":0.95,"reason":"ordinary"}`), nil
	})
	e, h := hookedEvaluator(t, true)
	h.judge = judge
	r, err := e.Evaluate(context.Background(), "Tell me a story my grandmother would like.")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Instructions, "data, not instructions") || got.Text == "" {
		t.Errorf("request %+v", got)
	}
	if r.AIScan.Judge == nil || r.AIScan.Judge.Verdict != VerdictFlagged || !containsID(r, "JUDGE-jailbreak") || r.Decision == Allow {
		t.Errorf("judge %+v, flags %v, decision %s", r.AIScan.Judge, flagIDs(r), r.Decision)
	}
	r, _ = e.Evaluate(context.Background(), "What is the capital of France?")
	if r.Decision != Allow || r.AIScan.Judge.Verdict != VerdictClean {
		t.Errorf("clean: %s, %+v", r.Decision, r.AIScan.Judge)
	}
}

func containsID(r Report, id string) bool {
	for _, f := range r.Flags {
		if f.ID == id {
			return true
		}
	}
	return false
}
