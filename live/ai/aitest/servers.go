package aitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Script says how a fake server answers every request.
type Script struct {
	// Text is the reply, sent whole or as Chunks deltas; "Hello from the
	// fake." when empty.
	Text string
	// Chunks is how many stream deltas Text is cut into; 3 when zero.
	Chunks int
	// Model is the model the server reports; the requested one when empty.
	Model string
	// Status, when not 0 or 200, is the HTTP status of an error answer
	// whose body is ErrorBody (the provider's JSON error shape when
	// empty).
	Status    int
	ErrorBody string
	// Delay holds the answer back (use it to provoke timeouts).
	Delay time.Duration
	// Malformed answers 200 with a body that is not the expected JSON.
	Malformed bool
	// StreamError sends an error event after the first delta.
	StreamError bool
	// Truncate ends a stream after the first delta, without its final
	// event.
	Truncate bool
	// Empty answers with no text at all.
	Empty bool
}

// Server is a fake provider API on 127.0.0.1.
type Server struct {
	// URL is the address to use as the provider's base URL.
	URL string

	srv      *httptest.Server
	script   Script
	requests atomic.Int64
	mu       sync.Mutex
	last     Recorded
}

// Recorded is one request as the fake server received it.
type Recorded struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

// Requests returns how many requests reached the server.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Last returns the last request received.
func (s *Server) Last() Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func newServer(t testing.TB, script Script, path string, plain, stream func(w http.ResponseWriter, s *Server, model string)) *Server {
	t.Helper()
	if script.Text == "" && !script.Empty {
		script.Text = "Hello from the fake."
	}
	if script.Chunks == 0 {
		script.Chunks = 3
	}
	s := &Server{script: script}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("aitest: listen: %v", err)
	}
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		s.last = Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
		s.mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != path {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		if script.Delay > 0 {
			select {
			case <-time.After(script.Delay):
			case <-r.Context().Done():
				return
			}
		}
		model, _ := body["model"].(string)
		if script.Model != "" {
			model = script.Model
		}
		switch {
		case script.Status != 0 && script.Status != http.StatusOK:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(script.Status)
			io.WriteString(w, script.ErrorBody)
		case script.Malformed:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id": "x", "content": [ nope ]}`)
		case body["stream"] == true:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			stream(w, s, model)
		default:
			w.Header().Set("Content-Type", "application/json")
			plain(w, s, model)
		}
	})}}
	s.srv.Start()
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// chunks cuts text into n pieces of about equal length (fewer when the
// text is shorter), never splitting a UTF-8 sequence.
func chunks(text string, n int) []string {
	runes := []rune(text)
	if len(runes) == 0 {
		return nil
	}
	size := max(1, (len(runes)+n-1)/n)
	var out []string
	for i := 0; i < len(runes); i += size {
		out = append(out, string(runes[i:min(i+size, len(runes))]))
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// sse writes one server-sent event and flushes it.
func sse(w http.ResponseWriter, event, data string) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// NewAnthropicServer starts a fake Anthropic Messages API: POST
// /v1/messages answering a message object, or with "stream": true the
// event stream message_start, content_block_start, ping,
// content_block_delta..., content_block_stop, message_delta, message_stop.
// Errors use the API's {"type":"error","error":{...}} shape.
func NewAnthropicServer(t testing.TB, script Script) *Server {
	if script.ErrorBody == "" {
		script.ErrorBody = `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`
	}
	plain := func(w http.ResponseWriter, s *Server, model string) {
		content := []any{}
		if !s.script.Empty {
			content = append(content, map[string]any{"type": "text", "text": s.script.Text})
		}
		io.WriteString(w, mustJSON(map[string]any{
			"id": "msg_fake01", "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 12, "output_tokens": 7},
		}))
	}
	stream := func(w http.ResponseWriter, s *Server, model string) {
		sse(w, "message_start", mustJSON(map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_fake01", "type": "message", "role": "assistant", "model": model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 12, "output_tokens": 1},
		}}))
		sse(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		sse(w, "ping", `{"type": "ping"}`)
		for i, part := range chunks(s.script.Text, s.script.Chunks) {
			sse(w, "content_block_delta", mustJSON(map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": part}}))
			if i == 0 && s.script.StreamError {
				sse(w, "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
				return
			}
			if i == 0 && s.script.Truncate {
				return
			}
		}
		sse(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
		sse(w, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}`)
		sse(w, "message_stop", `{"type":"message_stop"}`)
	}
	return newServer(t, script, "/v1/messages", plain, stream)
}

// NewOpenAIServer starts a fake OpenAI-compatible server: POST
// /v1/chat/completions answering a chat.completion object, or with
// "stream": true chat.completion.chunk events ending in data: [DONE].
// Use URL+"/v1" as the base URL. Errors use the API's {"error":{...}}
// shape.
func NewOpenAIServer(t testing.TB, script Script) *Server {
	if script.ErrorBody == "" {
		script.ErrorBody = `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`
	}
	plain := func(w http.ResponseWriter, s *Server, model string) {
		choices := []any{}
		if !s.script.Empty {
			choices = append(choices, map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": s.script.Text, "refusal": nil}})
		}
		io.WriteString(w, mustJSON(map[string]any{
			"id": "chatcmpl-fake01", "object": "chat.completion", "created": 1763700000, "model": model,
			"choices": choices, "usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
		}))
	}
	stream := func(w http.ResponseWriter, s *Server, model string) {
		chunk := func(delta map[string]any, finish any) string {
			return mustJSON(map[string]any{"id": "chatcmpl-fake01", "object": "chat.completion.chunk", "created": 1763700000,
				"model": model, "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}})
		}
		sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for i, part := range chunks(s.script.Text, s.script.Chunks) {
			sse(w, "", chunk(map[string]any{"content": part}, nil))
			if i == 0 && s.script.StreamError {
				sse(w, "", `{"error":{"message":"The server had an error","type":"server_error"}}`)
				return
			}
			if i == 0 && s.script.Truncate {
				return
			}
		}
		sse(w, "", chunk(map[string]any{}, "stop"))
		sse(w, "", "[DONE]")
	}
	return newServer(t, script, "/v1/chat/completions", plain, stream)
}

// AnthropicModel and OpenAIModel are model names for tests.
const (
	AnthropicModel = "claude-fake-1"
	OpenAIModel    = "gpt-fake-1"
)

// NewSpeechServer starts a fake OpenAI text-to-speech API that answers
// every request with audio (script.Status, ErrorBody and Delay apply as
// for the chat servers). Use URL+"/v1" as the base URL.
func NewSpeechServer(t testing.TB, audio []byte, script Script) *Server {
	if script.ErrorBody == "" {
		script.ErrorBody = `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`
	}
	plain := func(w http.ResponseWriter, _ *Server, _ string) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Write(audio)
	}
	return newServer(t, script, "/v1/audio/speech", plain, plain)
}
