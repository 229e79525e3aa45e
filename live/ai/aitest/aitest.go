// Package aitest holds test doubles for code that uses live/ai: a
// counting fake provider (route tests use it to prove that a rejected
// request never reaches a provider) and local servers on 127.0.0.1 that
// speak the real wire formats of the Anthropic Messages API and the
// OpenAI Chat Completions API, plain and streaming, for driving the
// official SDKs.
package aitest

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/proofsite/proofsite/live/ai"
)

// Counting is a Provider that answers at once with a fixed reply and counts
// its calls. Set Err to make every call fail with it. Safe for concurrent
// use.
type Counting struct {
	// Text is the reply; "fake reply" when empty.
	Text string
	// Err, when set, is returned by every call instead of a reply.
	Err error

	calls atomic.Int64
	mu    sync.Mutex
	last  ai.Request
}

var _ ai.Provider = (*Counting)(nil)

// Provider is the provider Counting reports as having answered.
const Provider ai.Kind = "fake"

// Model is the model Counting reports as having answered.
const Model = "fake-model"

// Calls returns how many calls reached the provider.
func (c *Counting) Calls() int64 { return c.calls.Load() }

// Last returns the last request the provider received.
func (c *Counting) Last() ai.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func (c *Counting) record(req ai.Request) (ai.Completion, error) {
	c.calls.Add(1)
	c.mu.Lock()
	c.last = req
	c.mu.Unlock()
	if c.Err != nil {
		return ai.Completion{}, c.Err
	}
	text := c.Text
	if text == "" {
		text = "fake reply"
	}
	return ai.Completion{Text: text, Provider: Provider, Model: Model}, nil
}

// Instant marks Counting as answering at once, without waiting on
// anything: a Node gives its Complete no timeout.
func (c *Counting) Instant() {}

// Complete counts the call and answers.
func (c *Counting) Complete(ctx context.Context, req ai.Request) (ai.Completion, error) {
	if err := ctx.Err(); err != nil {
		return ai.Completion{}, err
	}
	return c.record(req)
}

// Stream counts the call and sends the reply as one delta.
func (c *Counting) Stream(ctx context.Context, req ai.Request, delta func(string) error) (ai.Completion, error) {
	if err := ctx.Err(); err != nil {
		return ai.Completion{}, err
	}
	comp, err := c.record(req)
	if err != nil {
		return ai.Completion{}, err
	}
	if err := delta(comp.Text); err != nil {
		return ai.Completion{}, err
	}
	return comp, nil
}
