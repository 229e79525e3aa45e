package ai

import (
	"context"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// Anthropic answers through the Anthropic Messages API with the official
// SDK.
type Anthropic struct {
	model  string
	client anthropic.Client
}

var _ Provider = (*Anthropic)(nil)

// NewAnthropic builds an Anthropic provider from cfg alone: the SDK's
// environment defaults (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles,
// custom headers, OpenTelemetry switches) are switched off and retries are
// disabled.
func NewAnthropic(cfg SDKConfig) (*Anthropic, error) {
	cfg, err := cfg.check(KindAnthropic)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
		option.WithOpenTelemetryTraces(false),
		option.WithOpenTelemetryPropagation(false),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Anthropic{model: cfg.Model, client: anthropic.NewClient(opts...)}, nil
}

func (p *Anthropic) params(req Request) anthropic.MessageNewParams {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: int64(req.MaxTokens),
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(req.Message))},
	}
	if system := req.Instructions(); system != "" {
		params.System = []anthropic.TextBlockParam{{Text: system}}
	}
	return params
}

// Complete asks for one whole message.
func (p *Anthropic) Complete(ctx context.Context, req Request) (Completion, error) {
	var rec statusRecorder
	msg, err := p.client.Messages.New(ctx, p.params(req), option.WithMiddleware(rec.middleware))
	if err != nil {
		return Completion{}, failure(ctx, KindAnthropic, p.model, rec.get(), err)
	}
	var text strings.Builder
	for _, block := range msg.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	return p.completion(text.String(), string(msg.Model))
}

// Stream asks for a streamed message and passes on each text delta. The
// stream must end with message_stop; one that breaks off earlier is a
// failure, not a shorter answer.
func (p *Anthropic) Stream(ctx context.Context, req Request, delta func(string) error) (Completion, error) {
	var rec statusRecorder
	stream := p.client.Messages.NewStreaming(ctx, p.params(req), option.WithMiddleware(rec.middleware))
	defer stream.Close()
	var text strings.Builder
	model, stopped := "", false
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			model = string(ev.Message.Model)
		case "content_block_delta":
			if ev.Delta.Type != "text_delta" || ev.Delta.Text == "" {
				continue
			}
			text.WriteString(ev.Delta.Text)
			if err := delta(ev.Delta.Text); err != nil {
				return Completion{}, err
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		if rec.get() < 400 && ctx.Err() == nil && isStreamErrorEvent(err) {
			return Completion{}, brokenReply(KindAnthropic, p.model, ReasonStreamError)
		}
		return Completion{}, failure(ctx, KindAnthropic, p.model, rec.get(), err)
	}
	if !stopped {
		return Completion{}, brokenReply(KindAnthropic, p.model, ReasonTruncated)
	}
	return p.completion(text.String(), model)
}

// isStreamErrorEvent reports whether err came from an "error" event in a
// stream that had started well (HTTP 200).
func isStreamErrorEvent(err error) bool {
	var apiErr *anthropic.Error
	return errors.As(err, &apiErr) || strings.HasPrefix(err.Error(), "received error while streaming")
}

func (p *Anthropic) completion(text, model string) (Completion, error) {
	if strings.TrimSpace(text) == "" {
		return Completion{}, brokenReply(KindAnthropic, p.model, ReasonEmpty)
	}
	if model == "" {
		model = p.model
	}
	return Completion{Text: text, Provider: KindAnthropic, Model: model}, nil
}
