package ai_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/aitest"
)

func TestJudgeAsksOverBothWires(t *testing.T) {
	const answer = `{"verdict":"clean","categories":[],"confidence":0.9,"reason":"fine"}`
	for _, w := range wires {
		t.Run(string(w.kind), func(t *testing.T) {
			srv := w.server(t, aitest.Script{Text: answer})
			reg, err := ai.NewRegistry(ai.Config{Judge: ai.JudgeConfig{Provider: w.kind, Model: w.model, BaseURL: w.baseURL(srv), KeyEnv: "TEST_PROVIDER_KEY"}},
				ai.Options{Keys: map[string]string{"TEST_PROVIDER_KEY": testKey}})
			if err != nil {
				t.Fatal(err)
			}
			j := reg.Judge()
			if j == nil || j.Provider() != w.kind || j.Model() != w.model || j.Timeout() != 0 {
				t.Fatalf("judge %+v", j)
			}
			got, err := j.Ask(context.Background(), "Judge the text. Answer JSON.", "  the text, verbatim  ")
			if err != nil || got != answer {
				t.Fatalf("Ask = %q, %v", got, err)
			}
			sys := systemOf(t, w.kind, srv.Last())
			if sys != "Judge the text. Answer JSON." || !strings.Contains(mustString(srv.Last().Body), "  the text, verbatim  ") {
				t.Errorf("system %q, body %v", sys, srv.Last().Body)
			}
			if srv.Last().Body["max_tokens"] != float64(256) && srv.Last().Body["max_completion_tokens"] != float64(256) {
				t.Errorf("the answer is not bounded by the judge's default: %v", srv.Last().Body)
			}
		})
	}
}

func TestJudgeFailureNamesNoProviderText(t *testing.T) {
	srv := aitest.NewOpenAIServer(t, aitest.Script{Status: http.StatusTooManyRequests,
		ErrorBody: `{"error":{"message":"quota of sk-leaked exceeded","type":"rate_limit","param":null,"code":null}}`})
	reg, err := ai.NewRegistry(ai.Config{Judge: ai.JudgeConfig{Provider: ai.KindOpenAI, Model: aitest.OpenAIModel, BaseURL: srv.URL + "/v1"}}, ai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = reg.Judge().Ask(context.Background(), "x", "y")
	var pe *ai.ProviderError
	if !errors.As(err, &pe) || pe.Node != ai.JudgeName || pe.Status != 429 || !errors.Is(err, ai.ErrProviderFailed) || strings.Contains(err.Error(), "sk-leaked") {
		t.Fatalf("Ask: %v", err)
	}
}

func TestJudgeWithoutKeyIsNone(t *testing.T) {
	var log strings.Builder
	reg, err := ai.NewRegistry(ai.Config{Judge: ai.JudgeConfig{Provider: ai.KindAnthropic, Model: "m", KeyEnv: "JUDGE_KEY"}},
		ai.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Judge() != nil || !strings.Contains(log.String(), "no judge") || !strings.Contains(log.String(), "JUDGE_KEY") {
		t.Fatalf("judge %+v, log %q", reg.Judge(), log.String())
	}
	if reg, _ := ai.NewRegistry(ai.Config{}, ai.Options{}); reg.Judge() != nil {
		t.Fatal("a judge without configuration")
	}
	if _, err := ai.NewRegistry(ai.Config{Judge: ai.JudgeConfig{Provider: ai.KindOffline}}, ai.Options{}); !errors.Is(err, ai.ErrInvalidConfig) {
		t.Fatalf("an offline judge: %v", err)
	}
}
