package ai

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/proofsite/proofsite/ledger/charter"
)

// JudgeConfig is the judge section of site.yaml's ai section: the provider
// that judges texts for the evaluation pipeline.
type JudgeConfig = charter.AIJudge

// JudgeName is how a judge's provider failures name it (ProviderError.Node).
const JudgeName = "judge"

// Judge is the provider configured to judge texts in the evaluation
// pipeline's AI scan (Config.Judge). Unlike a Node it has no roster place,
// no instructions of its own and no bound on the text but the caller's:
// the pipeline sends its instructions and the text it has already
// checked, and parses the answer itself. Safe for concurrent use.
type Judge struct {
	provider  Provider
	kind      Kind
	model     string
	timeout   time.Duration
	maxTokens int
}

// newJudge builds the judge of cfg with its key (empty for a local
// server that needs none).
func newJudge(cfg JudgeConfig, key string, opts Options) (*Judge, error) {
	sdk := SDKConfig{Model: cfg.Model, BaseURL: cfg.BaseURL, APIKey: key, HTTPClient: opts.HTTPClient}
	p, err := newSDKProvider(cfg.Provider, sdk)
	if err != nil {
		return nil, fmt.Errorf("ai: judge: %w", err)
	}
	j := &Judge{provider: p, kind: cfg.Provider, model: cfg.Model, timeout: time.Duration(cfg.Timeout), maxTokens: cfg.MaxTokens}
	if j.maxTokens == 0 {
		j.maxTokens = charter.DefaultJudgeMaxTokens
	}
	return j, nil
}

// Provider is the configured provider.
func (j *Judge) Provider() Kind { return j.kind }

// Model is the configured model.
func (j *Judge) Model() string { return j.model }

// Timeout is the configured bound of one judgement; 0 leaves it to the
// caller's default.
func (j *Judge) Timeout() time.Duration { return j.timeout }

// Ask sends instructions as the system prompt and text as the user
// message, and returns the model's whole reply verbatim. ctx bounds the
// call. Provider failures are *ProviderError values naming JudgeName,
// never carrying what the provider said.
func (j *Judge) Ask(ctx context.Context, instructions, text string) (string, error) {
	c, err := j.provider.Complete(ctx, Request{System: instructions, Message: text, MaxTokens: j.maxTokens})
	if err != nil {
		var pe *ProviderError
		if errors.As(err, &pe) {
			named := *pe
			named.Node = JudgeName
			return "", &named
		}
		return "", err
	}
	return c.Text, nil
}
