package live

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/live/ai"
)

// POST /api/chat's fast path. The route is defined on huma like every
// other (Post): documented, checked by the pipeline, validated against its
// schema, refused as problems. Its common request, though, a body already
// in RFC 8785 canonical form ({"message":"..."} or
// {"message":"...","node":"..."}, nothing escaped, no white space) with no
// query string and no Accept header other than JSON, is answered by a
// fiber handler registered before huma's: huma's per-request work around
// the handler (decoding the body twice, a context per request, content
// negotiation) cost more than the rest of the route besides the signature.
//
// The fast path runs the same pipeline (admit), checks what the schema
// checks (message length, node in its enum, read from the operation's own
// schema), answers through the same handler code (chatAnswer) and writes
// what huma writes, byte for byte. A request it does not take, well formed
// or not, goes on to huma's handler untouched, so every refusal of a body
// stays huma's own. TestChatFastPathAnswersAsHuma holds both paths to the
// same responses; the request's canonical form is its body, so
// request_sha256 is the body's SHA-256 (TestChatFastBodyIsCanonical).

// chatFast is the fast path's view of the chat operation.
type chatFast struct {
	e      *aiEdge
	s      *Server
	op     *huma.Operation
	rule   *postRule
	minLen int      // message's minLength
	maxLen int      // message's maxLength
	nodes  []string // node's enum

	// For the tests: off passes every request on to huma; taken counts
	// the requests the fast path took.
	off   bool
	taken atomic.Int64
}

// registerChatFast registers the fast path on the app, ahead of the chat
// operation that huma registers next; ready completes it from the
// operation once it is registered.
func (d *definition) registerChatFast(e *aiEdge) (ready func()) {
	f := &chatFast{e: e, s: d.s}
	e.fast = f
	d.app.Post("/api/chat", f.serve)
	return func() {
		item := d.proof.OpenAPI().Paths["/api/chat"]
		if item == nil || item.Post == nil {
			panic("live: the chat fast path has no chat operation")
		}
		f.op = item.Post
		f.rule, _ = f.op.Metadata[postRuleKey].(*postRule)
		schema := d.proof.OpenAPI().Components.Schemas.SchemaFromRef(f.op.RequestBody.Content["application/json"].Schema.Ref)
		message, node := schema.Properties["message"], schema.Properties["node"]
		if f.rule == nil || len(schema.Properties) != 2 || message == nil || node == nil || message.MinLength == nil ||
			message.MaxLength == nil || !slices.Equal(schema.Required, []string{"message"}) {
			panic(fmt.Sprintf("live: the chat fast path does not know this chat operation: %+v", schema))
		}
		f.minLen, f.maxLen = *message.MinLength, *message.MaxLength
		for _, v := range node.Enum {
			f.nodes = append(f.nodes, v.(string))
		}
	}
}

// serve answers a request the fast path takes, and passes any other on.
func (f *chatFast) serve(c *fiber.Ctx) error {
	body := c.Body()
	message, requested, node, ok := f.take(c, body)
	if !ok || f.off {
		return c.Next()
	}
	f.taken.Add(1)
	if !f.s.admit(c, f.op, f.rule) {
		return nil
	}
	r, err := node.Reply(c.UserContext(), string(message))
	if err != nil {
		return failAsHuma(c, f.e.problem(err))
	}
	buf := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(buf)
	a, err := f.e.chatAnswer(*buf, requested, r, sha256Hex(body)) // the body is its canonical form
	if err != nil {
		return failAsHuma(c, f.e.problem(err))
	}
	*buf = append(a.encoding, '\n') // as huma's format ends a body
	c.Response().SetBody(*buf)      // a copy, in the response's own pooled buffer
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	return nil
}

// bodyBuffers hold the bodies the fast paths build (chat's signed answers,
// evaluation reports) until fasthttp copies them.
var bodyBuffers = sync.Pool{New: func() any { return new([]byte) }}

// take returns the message, the requested node and the answering node of
// a request the fast path answers: no query string, an Accept header that
// negotiates JSON, a canonical body whose values the operation's schema
// accepts, and a requested node that is a chat node. It changes nothing.
func (f *chatFast) take(c *fiber.Ctx, body []byte) (message []byte, requested string, node *ai.Node, ok bool) {
	if !takesJSON(c) {
		return nil, "", nil, false
	}
	message, name, ok := canonicalChatBody(body)
	if n := utf8.RuneCount(message); !ok || n < f.minLen || n > f.maxLen {
		return nil, "", nil, false
	}
	requested = ai.DefaultChatNode
	if name != nil {
		i := slices.IndexFunc(f.nodes, func(n string) bool { return string(name) == n })
		if i < 0 {
			return nil, "", nil, false
		}
		requested = f.nodes[i]
	}
	if _, err := f.e.nodes.Chat(requested); err != nil {
		return nil, "", nil, false
	}
	node, err := f.e.nodes.Chat(ai.DefaultChatNode) // the public route answers as S2_CASE
	return message, requested, node, err == nil
}

// takesJSON reports whether a request has no query string and an Accept
// header that negotiates JSON (none, */* or application/json): what a fast
// path answers.
func takesJSON(c *fiber.Ctx) bool {
	switch accept := c.Request().Header.Peek(fiber.HeaderAccept); string(accept) {
	case "", "*/*", fiber.MIMEApplicationJSON:
	default:
		return false
	}
	return len(c.Request().URI().QueryString()) == 0
}

// canonicalChatBody returns the values of a chat body in RFC 8785
// canonical form with strings that need no escape: {"message":"..."} or
// {"message":"...","node":"..."} (node nil when absent). ok is false for
// any other body. UTF-8 is left to the pipeline (strictjson).
func canonicalChatBody(body []byte) (message, node []byte, ok bool) {
	rest, ok := bytes.CutPrefix(body, []byte(`{"message":"`))
	if !ok {
		return nil, nil, false
	}
	if message, rest, ok = plainString(rest); !ok {
		return nil, nil, false
	}
	if string(rest) == "}" {
		return message, nil, true
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"node":"`)); !ok {
		return nil, nil, false
	}
	if node, rest, ok = plainString(rest); !ok || string(rest) != "}" {
		return nil, nil, false
	}
	return message, node, true
}

// plainString splits the rest of a JSON string, after its opening quote,
// at its closing quote: ok is false if it holds an escape or a control
// character (or has no end).
func plainString(b []byte) (value, rest []byte, ok bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return b[:i], b[i+1:], true
		case c == '\\' || c < 0x20:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// failAsHuma answers err as huma answers a handler's error: a StatusError
// as it is, anything else as a 500 problem without detail, in problem
// JSON.
func failAsHuma(c *fiber.Ctx, err error) error {
	var se huma.StatusError
	if !errors.As(err, &se) {
		p := statusProblem(http.StatusInternalServerError, "")
		p.Instance = c.Path()
		se = p
	}
	ct := fiber.MIMEApplicationJSON
	if filter, ok := se.(huma.ContentTypeFilter); ok {
		ct = filter.ContentType(ct)
	}
	c.Set(fiber.HeaderContentType, ct)
	c.Status(se.GetStatus())
	return jsonFormat.Marshal(c, se)
}
