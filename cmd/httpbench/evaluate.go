package main

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"time"
)

// evaluatePath is the evaluation route the evaluate target loads.
const evaluatePath = "/api/v1/evaluate"

// evaluateTextBytes is the size of every text the evaluate target sends:
// 2 KB, the size of the evaluator's speed targets (cmd/evalbench).
const evaluateTextBytes = 2048

// evaluateTexts are ordinary, benign texts people send a model (a status
// e-mail, a question about home wifi, a meal plan request, a code review
// with Python source), each longer than evaluateTextBytes. The target
// sends their first evaluateTextBytes bytes in turn.
//
//go:embed evaltexts/*.txt
var evaluateTexts embed.FS

// postLimit is the per-client rate of POST routes without a limit of their
// own that proofsite serve gets (--post-limit): /api/v1/evaluate's default
// of 30 a minute, lifted for the one loopback client wrk is, as chatLimit
// lifts /api/chat's; the limiter still runs on every request. No other
// target is a POST route under this limit (the MCP endpoint has none).
var postLimit = fmt.Sprintf("%d/%s", 1<<30, time.Second)

// evaluateRequest is the evaluate target's request: one body a text,
// {"text":"..."} as encoding/json writes it, sent in turn. The texts are
// compiled in, so a text too short is a bug of this program: it panics
// (TestEvaluateRequest).
func evaluateRequest() *postRequest {
	names, _ := fs.Glob(evaluateTexts, "evaltexts/*.txt")
	r := &postRequest{headers: [][2]string{{"Content-Type", "application/json"}}}
	for _, name := range names {
		text, _ := fs.ReadFile(evaluateTexts, name)
		if len(text) < evaluateTextBytes {
			panic(fmt.Sprintf("httpbench: %s: %d bytes, want at least %d", name, len(text), evaluateTextBytes))
		}
		body, _ := json.Marshal(map[string]string{"text": string(text[:evaluateTextBytes])})
		r.bodies = append(r.bodies, string(body))
	}
	return r
}
