package live

import (
	"bytes"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"
)

// POST /api/v1/evaluate's fast path, as chat's (chatfast.go): the route is
// huma's operation like every other, but its common request, a body of
// exactly one member {"text":"..."} without white space, with no query
// string and an Accept header that negotiates JSON, is answered by a fiber
// handler registered before huma's. huma's work around the evaluation
// (decoding the body into a map to validate it, then again into the
// input, a context per request, content negotiation) was about a fifth of
// the route's own CPU time on a 2 KB text (BenchmarkEvaluateHandler).
//
// The fast path runs the same pipeline (admit: rate, media type, size,
// strict JSON), decodes the text once with the decoder huma uses
// (jsontext unquotes as it does), answers through the same handler code (Server.evaluate)
// and writes what huma writes, byte for byte. A request it does not take
// goes on to huma untouched. TestEvaluateFastPathAnswersAsHuma holds both
// paths to the same responses.

// evalFast is the fast path's view of the evaluate operation.
type evalFast struct {
	s    *Server
	op   *huma.Operation
	rule *postRule

	// For the tests: off passes every request on to huma; taken counts
	// the requests the fast path took.
	off   bool
	taken atomic.Int64
}

// evaluateBodyPrefix begins every body the fast path takes.
const evaluateBodyPrefix = `{"text":`

// registerEvaluateFast registers the fast path on the app, ahead of the
// evaluate operation that huma registers next; ready completes it from
// the operation once it is registered.
func (d *definition) registerEvaluateFast() (ready func()) {
	f := &evalFast{s: d.s}
	d.s.evalFasts = append(d.s.evalFasts, f) // one a listener
	d.app.Post("/api/v1/evaluate", f.serve)
	return func() {
		item := d.v1.OpenAPI().Paths["/api/v1/evaluate"]
		if item == nil || item.Post == nil {
			panic("live: the evaluate fast path has no evaluate operation")
		}
		f.op = item.Post
		f.rule, _ = f.op.Metadata[postRuleKey].(*postRule)
		schema := d.v1.OpenAPI().Components.Schemas.SchemaFromRef(f.op.RequestBody.Content["application/json"].Schema.Ref)
		text := schema.Properties["text"]
		if f.rule == nil || len(schema.Properties) != 1 || text == nil || text.Type != "string" || text.MinLength != nil ||
			text.MaxLength != nil || text.Pattern != "" || text.Format != "" || !slices.Equal(schema.Required, []string{"text"}) {
			panic(fmt.Sprintf("live: the evaluate fast path does not know this evaluate operation: %+v", schema))
		}
	}
}

// serve answers a request the fast path takes, and passes any other on.
func (f *evalFast) serve(c *fiber.Ctx) error {
	text, ok := f.take(c)
	if !ok || f.off {
		return c.Next()
	}
	f.taken.Add(1)
	if !f.s.admit(c, f.op, f.rule) {
		return nil
	}
	r, err := f.s.evaluate(c.UserContext(), text)
	if err != nil {
		return failAsHuma(c, err)
	}
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	buf := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(buf)
	body, err := r.Body.appendJSON((*buf)[:0])
	if err != nil {
		return jsonFormat.Marshal(c.Response().BodyWriter(), r.Body) // huma's format says why
	}
	*buf = body
	c.Response().SetBody(body) // a copy, in the response's own pooled buffer
	return nil
}

// take returns the text of a request the fast path answers: no query
// string, an Accept header that negotiates JSON, and a body that is one
// object of the single member "text" whose value is a string, written
// without white space. It changes nothing; the pipeline checks the rest
// (UTF-8 and the rules of strict JSON).
func (f *evalFast) take(c *fiber.Ctx) (text string, ok bool) {
	if !takesJSON(c) {
		return "", false
	}
	body := c.Body()
	value, ok := bytes.CutPrefix(body, []byte(evaluateBodyPrefix))
	if !ok || len(value) < 3 || value[0] != '"' || string(value[len(value)-2:]) != `"}` {
		return "", false
	}
	value = value[:len(value)-1]
	if end := quotedEnd(value); end != len(value) {
		return "", false
	}
	if bytes.IndexByte(value, '\\') < 0 {
		return string(value[1 : len(value)-1]), true
	}
	// A text with escapes (every text with a line break has them): for
	// the valid UTF-8 that strict JSON admits, jsontext unquotes as huma's
	// decoder does, in a third of its time (segmentio re-encodes the text
	// rune by rune). What it refuses (such as a lone surrogate escape) goes
	// on to huma.
	unquoted, err := jsontext.AppendUnquote(make([]byte, 0, len(value)), value)
	if err != nil {
		return "", false
	}
	// The text is the buffer, without a second copy: nothing else holds
	// the buffer or writes to it again.
	return unsafe.String(unsafe.SliceData(unquoted), len(unquoted)), true
}

// quotedEnd returns the index after the JSON string that begins value
// (value[0] is its opening quote), or -1 if it does not end.
func quotedEnd(value []byte) int {
	for i := 1; i < len(value); i++ {
		switch value[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
