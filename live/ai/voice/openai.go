package voice

import (
	"context"
	"fmt"

	"github.com/proofsite/proofsite/live/ai"
)

// openAIModes are the OpenAI voice and speed of each mode.
var openAIModes = map[Mode]struct {
	voice string
	speed float64
}{
	ModeStandard: {"alloy", 1.0},
	ModeSlow:     {"alloy", 0.75},
	ModeFast:     {"alloy", 1.35},
}

// openAIBackend speaks through OpenAI's text-to-speech API.
type openAIBackend struct {
	speech *ai.OpenAISpeech
}

// NewOpenAI returns a Backend on OpenAI's text-to-speech API (cfg.Model
// is the speech model, e.g. gpt-4o-mini-tts; cfg.APIKey is required).
// Its failures are *ai.ProviderError values.
func NewOpenAI(cfg ai.SDKConfig) (Backend, error) {
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, fmt.Errorf("voice: openai backend: %w: no key", ai.ErrInvalidConfig)
	}
	s, err := ai.NewOpenAISpeech(cfg)
	if err != nil {
		return nil, fmt.Errorf("voice: openai backend: %w", err)
	}
	return &openAIBackend{speech: s}, nil
}

func (b *openAIBackend) Name() string { return "openai:" + b.speech.Model() }

func (b *openAIBackend) Synthesize(ctx context.Context, mode Mode, text string) ([]byte, error) {
	m, ok := openAIModes[mode]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrInvalidMode, mode)
	}
	return b.speech.Speak(ctx, text, m.voice, m.speed)
}
