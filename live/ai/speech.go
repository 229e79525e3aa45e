package ai

import (
	"context"
	"fmt"
	"io"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// MaxSpeechBytes bounds the audio OpenAISpeech accepts from the provider.
const MaxSpeechBytes = 16 << 20

// OpenAISpeech is OpenAI's text-to-speech API through the official SDK,
// built like the chat providers: from its SDKConfig alone, no retries.
type OpenAISpeech struct {
	model  string
	speech openai.AudioSpeechService
}

// NewOpenAISpeech builds the text-to-speech client; cfg.Model is the speech
// model, for example gpt-4o-mini-tts.
func NewOpenAISpeech(cfg SDKConfig) (*OpenAISpeech, error) {
	cfg, err := cfg.check(KindOpenAI)
	if err != nil {
		return nil, err
	}
	return &OpenAISpeech{model: cfg.Model, speech: openai.NewAudioSpeechService(openAIOptions(cfg)...)}, nil
}

// Model returns the speech model.
func (s *OpenAISpeech) Model() string { return s.model }

// Speak returns text spoken by voice at speed (0.25 to 4) as MP3 bytes.
// Failures are *ProviderError values without provider text.
func (s *OpenAISpeech) Speak(ctx context.Context, text, voice string, speed float64) ([]byte, error) {
	var rec statusRecorder
	res, err := s.speech.New(ctx, openai.AudioSpeechNewParams{
		Input:          text,
		Model:          s.model,
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(voice)},
		Speed:          openai.Float(speed),
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormatMP3,
	}, option.WithMiddleware(rec.middleware))
	if err != nil {
		return nil, failure(ctx, KindOpenAI, s.model, rec.get(), err)
	}
	defer res.Body.Close()
	audio, err := io.ReadAll(io.LimitReader(res.Body, MaxSpeechBytes+1))
	switch {
	case err != nil:
		return nil, failure(ctx, KindOpenAI, s.model, rec.get(), fmt.Errorf("read audio: %w", err))
	case len(audio) > MaxSpeechBytes:
		return nil, brokenReply(KindOpenAI, s.model, ReasonMalformed)
	case len(audio) == 0:
		return nil, brokenReply(KindOpenAI, s.model, ReasonEmpty)
	}
	return audio, nil
}
