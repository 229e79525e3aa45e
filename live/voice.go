package live

import (
	"context"
	"strings"

	"github.com/proofsite/proofsite/live/ai/voice"
)

// VoiceRequest is the body of POST /api/voice.
type VoiceRequest struct {
	Text string   `json:"text" minLength:"1" maxLength:"1000" doc:"What to say, at most 1,000 characters"`
	Mode string   `json:"mode,omitempty" enum:"standard,slow,fast" doc:"standard (the default): a neutral voice at an ordinary pace; slow: slower, for dictation and learners; fast: faster, for skimming"`
	_    struct{} `additionalProperties:"false"`
}

type voiceInput struct{ Body VoiceRequest }

// voiceOutput is spoken text: the MP3 and its headers.
type voiceOutput struct {
	ContentType string `header:"Content-Type"`
	ETag        string `header:"ETag" doc:"SHA-256 of the mode and the text"`
	Backend     string `header:"X-Voice-Backend" doc:"Which backend spoke: espeak-ng, or openai:MODEL"`
	Body        []byte
}

func (e *aiEdge) speak(ctx context.Context, in *voiceInput) (*voiceOutput, error) {
	sp, err := e.voice.Speak(ctx, in.Body.Text, in.Body.Mode)
	if err != nil {
		return nil, e.problem(err)
	}
	return &voiceOutput{ContentType: "audio/mpeg", ETag: `"` + sp.Key + `"`, Backend: sp.Backend, Body: sp.MP3}, nil
}

// modeList names the voice's modes.
func modeList() string {
	names := make([]string, len(voice.Modes))
	for i, m := range voice.Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
