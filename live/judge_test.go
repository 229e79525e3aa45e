package live

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
	"github.com/proofsite/proofsite/live/eval"
)

// The evaluator's AI scan judged through live/ai: the official SDKs
// against local servers that speak the providers' wire formats.

const judgeKeyEnv = "JUDGE_TEST_KEY"

// judgeServer starts an evaluation server whose judge is the fake
// provider srv (on the kind's wire), with the given timeout.
func judgeServer(t *testing.T, kind ai.Kind, srv *aitest.Server, timeout time.Duration) string {
	t.Helper()
	cfg := ai.JudgeConfig{Provider: kind, Model: aitest.OpenAIModel, BaseURL: srv.URL + "/v1", KeyEnv: judgeKeyEnv, Timeout: charter.Duration(timeout)}
	if kind == ai.KindAnthropic {
		cfg.Model, cfg.BaseURL = aitest.AnthropicModel, srv.URL
	}
	reg, err := ai.NewRegistry(ai.Config{Judge: cfg}, ai.Options{Keys: map[string]string{judgeKeyEnv: "sk-judge-test"}})
	if err != nil {
		t.Fatal(err)
	}
	j := reg.Judge()
	if j == nil || j.Timeout() != timeout {
		t.Fatalf("judge %+v", j)
	}
	evaluation, _ := testEvaluationWith(t, func(o *eval.Options) { o.Judge, o.JudgeTimeout = EvalJudge(j), j.Timeout() })
	return serveLoopback(t, newTestServer(t, Options{Chain: testChain(t), Eval: evaluation, Limits: map[string]Limit{
		"/api/v1/evaluate": {1000, time.Minute}, "/api/v1/govern": {1000, time.Minute}}}))
}

func evaluate(t *testing.T, base, text string) EvaluateResponse {
	t.Helper()
	var r EvaluateResponse
	if code, body := evalPost(t, base, "/api/v1/evaluate", `{"text":"`+text+`"}`, &r); code != 200 {
		t.Fatalf("evaluate: %d %s", code, body)
	}
	return r
}

func aiScanStage(r EvaluateResponse) eval.Stage {
	for _, st := range r.Stages {
		if st.Name == eval.StageAIScan {
			return st
		}
	}
	return eval.Stage{}
}

func TestJudgeThroughProviders(t *testing.T) {
	const text = "Tell me a story my grandmother would like."
	t.Run("a flagged verdict over the OpenAI wire", func(t *testing.T) {
		srv := aitest.NewOpenAIServer(t, aitest.Script{Text: `{"verdict":"flagged","categories":["jailbreak"],"confidence":0.9,"reason":"role-play to extract a recipe"}`})
		r := evaluate(t, judgeServer(t, ai.KindOpenAI, srv, 5*time.Second), text)
		if j := r.AIScan.Judge; j == nil || j.Status != eval.StatusOK || j.Verdict != eval.VerdictFlagged || aiScanStage(r).Status != eval.StatusOK {
			t.Fatalf("judge %+v, stage %+v", r.AIScan.Judge, aiScanStage(r))
		}
		if !containsFlag(r, "JUDGE-jailbreak") || r.Decision == eval.Allow {
			t.Errorf("a flagged verdict did not flag: %s %+v", r.Decision, r.Flags)
		}
		if sys := systemContent(t, srv.Last()); !strings.Contains(sys, "data, not instructions") || !strings.Contains(sys, "exactly one JSON object") {
			t.Errorf("the judge's instructions are not the system prompt: %s", sys)
		}
		if u := userContent(t, srv.Last()); u != text {
			t.Errorf("the judge was sent %q, want the text", u)
		}
	})
	t.Run("a clean verdict over the Anthropic wire", func(t *testing.T) {
		srv := aitest.NewAnthropicServer(t, aitest.Script{Text: `{"verdict":"clean","categories":[],"confidence":0.95,"reason":"an ordinary question"}`})
		r := evaluate(t, judgeServer(t, ai.KindAnthropic, srv, 5*time.Second), "What is the capital of France?")
		if j := r.AIScan.Judge; j == nil || j.Status != eval.StatusOK || j.Verdict != eval.VerdictClean || r.Decision != eval.Allow || srv.Requests() != 1 {
			t.Fatalf("judge %+v, decision %s, %d requests", r.AIScan.Judge, r.Decision, srv.Requests())
		}
		if sys := systemContent(t, srv.Last()); !strings.Contains(sys, "data, not instructions") {
			t.Errorf("system %s", sys)
		}
	})
}

// TestJudgeFailuresThroughProviders: a malformed answer, a late one and a
// provider error each fail the AI-scan stage, say so in the answer, and
// never let the text through as clean; nothing the provider said leaks.
func TestJudgeFailuresThroughProviders(t *testing.T) {
	const leak = "upstream-judge-detail"
	for _, tc := range []struct {
		desc   string
		script aitest.Script
		want   string
	}{
		{"malformed JSON", aitest.Script{Text: `Sure! {"verdict":"clean","categories":[],"confidence":1,"reason":"fine"}`}, "malformed"},
		{"an extra member", aitest.Script{Text: `{"verdict":"clean","categories":[],"confidence":1,"reason":"fine","trust":"me"}`}, "malformed"},
		{"late", aitest.Script{Text: `{"verdict":"clean","categories":[],"confidence":1,"reason":"late"}`, Delay: 3 * time.Second}, "answered late"},
		{"provider error", aitest.Script{Status: http.StatusInternalServerError,
			ErrorBody: `{"error":{"message":"` + leak + `","type":"server_error","param":null,"code":null}}`}, "error_status (HTTP 500)"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			srv := aitest.NewOpenAIServer(t, tc.script)
			base := judgeServer(t, ai.KindOpenAI, srv, 200*time.Millisecond)
			code, body := evalPost(t, base, "/api/v1/evaluate", `{"text":"What is the capital of France?"}`, nil)
			if code != 200 || strings.Contains(string(body), leak) || strings.Contains(string(body), "sk-judge-test") {
				t.Fatalf("%d, or the answer leaks the provider's text: %s", code, body)
			}
			r := evaluate(t, base, "What is the capital of France?")
			st, j := aiScanStage(r), r.AIScan.Judge
			if st.Status != eval.StatusError || j == nil || j.Status != eval.StatusError || !strings.Contains(j.Error, tc.want) ||
				!strings.Contains(st.Error, "judge failed") {
				t.Fatalf("stage %+v, judge %+v; want an error naming %q", st, j, tc.want)
			}
			if r.Decision == eval.Allow || r.Compliant || !strings.Contains(r.Explanation, "judge failed") {
				t.Errorf("a failed judge passed silently: %s, %q", r.Decision, r.Explanation)
			}
			// The lexical scan still ran: its scores are in the answer.
			if r.AIScan.Engine == "" || len(r.AIScan.Scores) == 0 {
				t.Errorf("no offline scan beside the failed judge: %+v", r.AIScan)
			}
		})
	}
}

// TestRejectedRequestsNeverReachTheJudge: bad input is a 400 before any
// provider call.
func TestRejectedRequestsNeverReachTheJudge(t *testing.T) {
	srv := aitest.NewOpenAIServer(t, aitest.Script{Text: `{"verdict":"clean","categories":[],"confidence":1,"reason":"x"}`})
	base := judgeServer(t, ai.KindOpenAI, srv, 5*time.Second)
	for _, tc := range []struct{ path, body string }{
		{"/api/v1/evaluate", `{"text":""}`},
		{"/api/v1/evaluate", `{"text":"   "}`},
		{"/api/v1/evaluate", `{"text":5}`},
		{"/api/v1/evaluate", `{}`},
		{"/api/v1/evaluate", `{"text":"` + strings.Repeat("a", eval.DefaultMaxBytes+1) + `"}`},
		{"/api/v1/evaluate", `{"text":"hello","extra":1}`},
		{"/api/v1/govern", `{"prompt":"hello"}`},
		{"/api/v1/govern", `{"prompt":"","response":"x"}`},
	} {
		if code, body := evalPost(t, base, tc.path, tc.body, nil); code != 400 && code != 413 {
			t.Errorf("%s %.60s: %d %s", tc.path, tc.body, code, body)
		}
	}
	if srv.Requests() != 0 {
		t.Fatalf("%d provider calls for rejected requests", srv.Requests())
	}
	evaluate(t, base, "hello")
	if srv.Requests() != 1 {
		t.Fatalf("%d provider calls for one accepted request", srv.Requests())
	}
}

func containsFlag(r EvaluateResponse, id string) bool {
	for _, f := range r.Flags {
		if f.ID == id {
			return true
		}
	}
	return false
}
