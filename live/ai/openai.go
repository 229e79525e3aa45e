package ai

import (
	"context"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// OpenAI answers through the Chat Completions API with the official SDK.
// It reaches OpenAI itself and any compatible server (Ollama, vLLM)
// through SDKConfig.BaseURL.
type OpenAI struct {
	model string
	chat  openai.ChatCompletionService
}

var _ Provider = (*OpenAI)(nil)

// openAIOptions is the complete option list of an OpenAI SDK service. The
// services are built from it directly rather than through
// openai.NewClient, whose defaults read OPENAI_API_KEY, OPENAI_BASE_URL,
// OPENAI_ORG_ID, OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS.
func openAIOptions(cfg SDKConfig) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithEnvironmentProduction(),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return opts
}

// NewOpenAI builds an OpenAI-compatible provider from cfg alone, with
// retries disabled.
func NewOpenAI(cfg SDKConfig) (*OpenAI, error) {
	cfg, err := cfg.check(KindOpenAI)
	if err != nil {
		return nil, err
	}
	return &OpenAI{model: cfg.Model, chat: openai.NewChatCompletionService(openAIOptions(cfg)...)}, nil
}

func (p *OpenAI) params(req Request) openai.ChatCompletionNewParams {
	var msgs []openai.ChatCompletionMessageParamUnion
	if system := req.Instructions(); system != "" {
		msgs = append(msgs, openai.SystemMessage(system))
	}
	msgs = append(msgs, openai.UserMessage(req.Message))
	return openai.ChatCompletionNewParams{
		Model:               p.model,
		Messages:            msgs,
		MaxCompletionTokens: openai.Int(int64(req.MaxTokens)),
	}
}

// Complete asks for one whole chat completion.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Completion, error) {
	var rec statusRecorder
	res, err := p.chat.New(ctx, p.params(req), option.WithMiddleware(rec.middleware))
	if err != nil {
		return Completion{}, failure(ctx, KindOpenAI, p.model, rec.get(), err)
	}
	if len(res.Choices) == 0 {
		return Completion{}, brokenReply(KindOpenAI, p.model, ReasonEmpty)
	}
	return p.completion(res.Choices[0].Message.Content, res.Model)
}

// Stream asks for a streamed chat completion and passes on each content
// delta. A stream must carry a finish_reason before it ends; one that
// breaks off earlier is a failure, not a shorter answer.
func (p *OpenAI) Stream(ctx context.Context, req Request, delta func(string) error) (Completion, error) {
	var rec statusRecorder
	stream := p.chat.NewStreaming(ctx, p.params(req), option.WithMiddleware(rec.middleware))
	defer stream.Close()
	var text strings.Builder
	model, finished := "", false
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			model = chunk.Model
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue
			}
			if choice.FinishReason != "" {
				finished = true
			}
			if choice.Delta.Content == "" {
				continue
			}
			text.WriteString(choice.Delta.Content)
			if err := delta(choice.Delta.Content); err != nil {
				return Completion{}, err
			}
		}
	}
	if err := stream.Err(); err != nil {
		var se *ssestream.StreamError
		if errors.As(err, &se) && ctx.Err() == nil {
			return Completion{}, brokenReply(KindOpenAI, p.model, ReasonStreamError)
		}
		return Completion{}, failure(ctx, KindOpenAI, p.model, rec.get(), err)
	}
	if !finished {
		return Completion{}, brokenReply(KindOpenAI, p.model, ReasonTruncated)
	}
	return p.completion(text.String(), model)
}

func (p *OpenAI) completion(text, model string) (Completion, error) {
	if strings.TrimSpace(text) == "" {
		return Completion{}, brokenReply(KindOpenAI, p.model, ReasonEmpty)
	}
	if model == "" {
		model = p.model
	}
	return Completion{Text: text, Provider: KindOpenAI, Model: model}, nil
}
