package live

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/receipt"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/ai/voice"
)

// The AI routes (specification 4.4 and 4.5): chat, pulse and voice, the
// public airlock (/api/ember, /api/lumen), and the agent gateway's query
// and receipt check. Handlers stay thin: the pipeline and huma have
// checked the request; the handler asks a node of live/ai, signs the
// answer with that node's key (ledger/receipt) and encodes it. A node's
// answer is given the message and the node's published instructions,
// nothing else: no memory, no earlier request, no private context.

// AI is what the AI routes answer with; cmd builds it. Without it (Options.AI
// nil) the routes are not part of the server.
type AI struct {
	// Nodes are the answering nodes with their providers; required.
	Nodes *ai.Registry
	// Voice speaks POST /api/voice; required.
	Voice *voice.Voice
	// Keys are the nodes' receipt keys by designation: every node of
	// Nodes needs one.
	Keys map[string]ledger.PrivateKey
}

// aiEdge is the server's state for the AI routes.
type aiEdge struct {
	nodes   *ai.Registry
	voice   *voice.Voice
	keys    map[string]ledger.PrivateKey
	keyring receipt.Keyring
	queries queryLog
	log     *slog.Logger
	// writeTimeout bounds each write of an event stream.
	writeTimeout time.Duration
	// fast is POST /api/chat's fast path (chatfast.go).
	fast *chatFast
}

func newAIEdge(opts *AI, log *slog.Logger) (*aiEdge, error) {
	if opts.Nodes == nil || opts.Voice == nil {
		return nil, errors.New("live: AI needs Nodes and Voice")
	}
	var pins []receipt.NodeKey
	for _, n := range opts.Nodes.Nodes() {
		d := n.Info().Designation
		k, ok := opts.Keys[d]
		if !ok || k.ID() == "" {
			return nil, fmt.Errorf("live: node %s has no receipt key", d)
		}
		pins = append(pins, receipt.NodeKey{Node: d, Key: k.Public()})
	}
	keyring, err := receipt.NewKeyring(pins...)
	if err != nil {
		return nil, fmt.Errorf("live: %w", err)
	}
	return &aiEdge{nodes: opts.Nodes, voice: opts.Voice, keys: opts.Keys, keyring: keyring, log: log.With("component", "ai")}, nil
}

var (
	aiTags      = []string{"AI nodes"}
	gatewayTags = []string{"Agent gateway v1"}
)

// airlockRefusal is added to the problem of a body member the airlock
// routes do not declare.
const airlockRefusal = "no session, memory or context field is accepted here, and session context is never accepted as authority"

// Isolation states what a public answer was given besides the message:
// nothing. Every member is false on every answer.
type Isolation struct {
	Memory                    bool `json:"memory" doc:"false: no memory is read or written; nothing is kept between requests"`
	PrivateContext            bool `json:"private_context" doc:"false: the node is given the message and its published instructions, nothing else"`
	SessionContextIsAuthority bool `json:"session_context_is_authority" doc:"false: nothing in a request is authority"`
}

// NodeAnswer is a node's answer on a public route, signed.
type NodeAnswer struct {
	ai.Reply
	Isolation Isolation `json:"isolation"`
	Fresh
	Receipt *receipt.Receipt `json:"receipt,omitempty" required:"true" doc:"The answering node's signed receipt over the request and this answer (see POST /api/agent/receipt)"`
	// encoding is the whole answer as it is sent, set by signed (nil:
	// encode the answer as usual).
	encoding []byte
}

// signedJSON returns the answer's encoding, if it carries one (jsonFormat).
func (a NodeAnswer) signedJSON() []byte { return a.encoding }

// ChatAnswer is the answer of POST /api/chat.
type ChatAnswer struct {
	NodeAnswer
	RequestedNode string `json:"requested_node" doc:"The node the request named, S2_CASE when it named none; the public route answers as S2_CASE"`
}

// PulseAnswer is the answer of POST /api/pulse: every chat node's entry.
type PulseAnswer struct {
	Topic    string       `json:"topic"`
	Answered int          `json:"answered" doc:"How many nodes answered"`
	Nodes    []PulseEntry `json:"nodes" doc:"One entry per chat node, in roster order"`
	Fresh
}

// PulseEntry is one node's part of a pulse with its receipt.
type PulseEntry struct {
	ai.PulseEntry
	Isolation Isolation        `json:"isolation"`
	Receipt   *receipt.Receipt `json:"receipt,omitempty" doc:"The node's signed receipt over the request and this entry (without its receipt member); absent when the node did not answer"`
}

// QueryAnswer is the answer of /api/v1/query.
type QueryAnswer struct {
	NodeAnswer
	Recorded []string `json:"recorded" doc:"Everything this server keeps of the query: a per-client rate counter (POST), a count per node, and the request and response SHA-256 of the receipt; never the text or the client"`
}

// queryRecorded is QueryAnswer.Recorded.
var queryRecorded = []string{"rate_limit_counter", "count_per_node", "request_sha256", "response_sha256"}

// registerAI registers the AI routes: the gateway's on the verification
// API (both listeners), the others on the proof surface.
func (d *definition) registerAI() {
	e := d.s.ai // nil when the definition is only described (Documents)
	withCtx := huma.Middlewares{withFiber}
	if d.proof != nil {
		d.registerNodes(e, withCtx)
	}
	const queryRules = "The public airlock of the agent gateway: `question`, and `node` Ember (S5_LOCUS, the default) or Lumen " +
		"(S17_LUMEN); no other field or parameter is accepted (400), and session context is never accepted as authority. No " +
		"private memory or context is given to the node. This server keeps of a query only a count per node, the per-client " +
		"rate counter of POST, and the SHA-256 hashes of the request and the answer (a bounded ring of the most recent " +
		"ones): never the text, never the client. No memory, registration or credentials are created. The answer carries a " +
		"receipt signed with the answering node's key."
	huma.Register(d.v1, huma.Operation{OperationID: "query-get", Method: http.MethodGet, Path: "/api/v1/query", Tags: gatewayTags,
		Middlewares: withCtx, Summary: "Ask the public airlock (Ember or Lumen) through query parameters",
		Description: queryRules + " For GET, the receipt's request_sha256 is the SHA-256 of the RFC 8785 canonical JSON object " +
			"of the parameters given, e.g. {\"node\":\"Lumen\",\"question\":\"...\"}. Like every GET route it is not rate-limited.",
		Errors: []int{http.StatusBadRequest, http.StatusBadGateway, http.StatusGatewayTimeout},
	}, e.queryGet)
	Post(d.v1, huma.Operation{OperationID: "query-post", Path: "/api/v1/query", Tags: gatewayTags, Middlewares: withCtx,
		Summary: "Ask the public airlock (Ember or Lumen)", Description: queryRules,
		Errors: []int{http.StatusBadGateway, http.StatusGatewayTimeout},
	}, PostRoute{Refusal: airlockRefusal}, e.queryPost)
	Post(d.v1, huma.Operation{OperationID: "agent-receipt", Path: "/api/agent/receipt", Tags: gatewayTags,
		Summary: "Verify a node's receipt",
		Description: "Checks a receipt as it was received against this server's node keys (role node, published in /api/nodes and " +
			"ai.json): the form of every member, that key_id is the named node's key, the ed25519 signature over the RFC 8785 " +
			"canonical JSON of the stated members, and, when given, that `request` and `response` hash to request_sha256 and " +
			"response_sha256 (the response without its receipt member). A receipt that passes every check is 200 with " +
			"verified true and the key; any failure is a 422 problem (receipt-not-verified) naming the member that failed, " +
			"never verified true. A body that is not JSON is 400.",
		Errors: []int{http.StatusUnprocessableEntity},
	}, PostRoute{}, e.verifyReceipt)
}

func (d *definition) registerNodes(e *aiEdge, withCtx huma.Middlewares) {
	chatFastReady := func() {}
	if e != nil {
		chatFastReady = d.registerChatFast(e) // before the operation: it answers first (chatfast.go)
	}
	Post(d.proof, huma.Operation{OperationID: "chat", Path: "/api/chat", Tags: aiTags, Middlewares: withCtx,
		Summary: "Ask the public chat node; answers as S2_CASE, public-session isolation, memory off",
		Description: "The public chat route answers as S2_CASE, the public chat node: `node` may name any chat node of the roster " +
			"(S1_PLEX, S2_CASE, S3_TARS, S4_KIPP, S6_FORGE; another value is 400), is recorded in the answer as `requested_node`, " +
			"and S2_CASE answers whichever it names (POST /api/pulse asks every chat node). Each request stands alone: no memory, " +
			"no earlier message, no private context; the answer says so (`isolation`). The answer names the node, the provider and " +
			"the model that answered, and carries a receipt signed with S2_CASE's key. With `Accept: text/event-stream` the reply " +
			"streams as server-sent events: `delta` events ({\"text\": ...}) as the provider writes, then one `reply` event holding " +
			"the whole answer as JSON with its receipt, or one `error` event holding a problem if the provider fails after the stream " +
			"began. A provider that fails before the first byte is a 502 (504 for its timeout) problem that carries none of the " +
			"provider's text, as in JSON.",
		Errors:    []int{http.StatusBadGateway, http.StatusGatewayTimeout},
		Responses: map[string]*huma.Response{"200": {Content: map[string]*huma.MediaType{"application/json": {}, "text/event-stream": {}}}},
	}, PostRoute{Limit: ChatLimit, Refusal: airlockRefusal}, e.chat)
	chatFastReady()
	Post(d.proof, huma.Operation{OperationID: "pulse", Path: "/api/pulse", Tags: aiTags, Middlewares: withCtx,
		Summary: "Every chat node weighs in on a topic, at once",
		Description: "Asks S1_PLEX, S2_CASE, S3_TARS, S4_KIPP and S6_FORGE concurrently, each through its own provider with its own " +
			"timeout. A node that fails does not fail the pulse: its entry says why (timeout or provider_error, with a reason from " +
			"a fixed vocabulary) and carries no receipt; every answering node's entry carries a receipt signed with that node's key.",
	}, PostRoute{Limit: PulseLimit, Refusal: airlockRefusal}, e.pulse)
	for _, a := range []struct{ path, name, designation string }{
		{"/api/ember", "Ember", "S5_LOCUS"}, {"/api/lumen", "Lumen", "S17_LUMEN"},
	} {
		Post(d.proof, huma.Operation{OperationID: "airlock-" + a.name, Path: a.path, Tags: aiTags, Middlewares: withCtx,
			Summary: fmt.Sprintf("The public airlock: %s (%s) answers; no private memory or context", a.name, a.designation),
			Description: fmt.Sprintf("%s answers one message. The body is `{\"message\": ...}` and nothing else: any other member, "+
				"such as a session, memory or context field, is refused (400 unknown-member), and session context is never accepted "+
				"as authority. No private memory or context is given to the node. The answer names the node, provider and model and "+
				"carries a receipt signed with %s's key.", a.name, a.designation),
			Errors: []int{http.StatusBadGateway, http.StatusGatewayTimeout},
		}, PostRoute{Refusal: airlockRefusal}, e.airlock(a.path, a.name))
	}
	Post(d.proof, huma.Operation{OperationID: "voice", Path: "/api/voice", Tags: aiTags,
		Summary: "Speak a text: audio/mpeg",
		Description: "Speaks `text` (at most 1,000 characters) as MP3. `mode` is one of standard (the default), slow and fast; " +
			"any other value is 400. Identical requests are answered from a cache keyed by the SHA-256 of mode and text (the ETag). " +
			"The voice speaks the text it is given: no node answers, so the audio carries no receipt.",
		Errors: []int{http.StatusGatewayTimeout},
		Responses: map[string]*huma.Response{"200": {Description: "The spoken text", Content: map[string]*huma.MediaType{
			"audio/mpeg": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}},
	}, PostRoute{Limit: VoiceLimit}, e.speak)
}

// fiberCtxKey carries the request's fiber context to an AI handler.
type fiberCtxKey struct{}

// withFiber gives an operation's handler its fiber context (fiberOf): the
// AI routes hash the raw body they sign, read the query string and write
// event streams.
func withFiber(ctx huma.Context, next func(huma.Context)) {
	next(huma.WithValue(ctx, fiberCtxKey{}, humafiber.Unwrap(ctx)))
}

func fiberOf(ctx context.Context) *fiber.Ctx {
	c, _ := ctx.Value(fiberCtxKey{}).(*fiber.Ctx)
	return c
}

// ChatInput is a chat request.
type ChatInput struct {
	Accept string `header:"Accept" doc:"text/event-stream streams the reply as server-sent events; otherwise the answer is JSON"`
	Body   ai.ChatRequest
}

func (e *aiEdge) chat(ctx context.Context, in *ChatInput) (*reply[ChatAnswer], error) {
	requested := cmp.Or(in.Body.Node, ai.DefaultChatNode)
	if _, err := e.nodes.Chat(requested); err != nil {
		return nil, e.problem(err)
	}
	node, err := e.nodes.Chat(ai.DefaultChatNode) // the public route answers as S2_CASE
	if err != nil {
		return nil, e.problem(err)
	}
	c := fiberOf(ctx)
	reqHash, err := receipt.HashJSON(c.Body())
	if err != nil {
		return nil, err
	}
	if acceptsEventStream(in.Accept) {
		return nil, e.stream(ctx, c, node, in.Body.Message, func(r ai.Reply) (any, error) { return e.chatAnswer(nil, requested, r, reqHash) })
	}
	r, err := node.Reply(ctx, in.Body.Message)
	if err != nil {
		return nil, e.problem(err)
	}
	a, err := e.chatAnswer(nil, requested, r, reqHash)
	if err != nil {
		return nil, e.problem(err)
	}
	return &reply[ChatAnswer]{Body: a}, nil
}

// chatAnswer is the signed chat answer of r, its encoding written in buf's
// storage (aiEdge.signed).
func (e *aiEdge) chatAnswer(buf []byte, requested string, r ai.Reply, reqHash string) (ChatAnswer, error) {
	a := ChatAnswer{NodeAnswer: NodeAnswer{Reply: r, Fresh: fresh()}, RequestedNode: requested}
	rc, enc, err := e.signed(buf, "/api/chat", r, reqHash, &a)
	a.Receipt, a.encoding = &rc, enc
	return a, err
}

type pulseInput struct{ Body ai.PulseRequest }

func (e *aiEdge) pulse(ctx context.Context, in *pulseInput) (*reply[PulseAnswer], error) {
	reqHash, err := receipt.HashJSON(fiberOf(ctx).Body())
	if err != nil {
		return nil, err
	}
	res, err := e.nodes.Pulse(ctx, in.Body.Topic)
	if err != nil {
		return nil, e.problem(err)
	}
	out := PulseAnswer{Topic: res.Topic, Answered: res.Answered, Nodes: make([]PulseEntry, len(res.Nodes)), Fresh: fresh()}
	for i, entry := range res.Nodes {
		out.Nodes[i] = PulseEntry{PulseEntry: entry}
		if entry.Error != "" {
			e.log.Warn("pulse: a node did not answer", "node", entry.Node, "error", entry.Error, "reason", string(entry.Reason), "status", entry.Status)
			continue
		}
		canon, err := ledger.MarshalCanonical(out.Nodes[i])
		if err != nil {
			return nil, e.problem(fmt.Errorf("live: receipt: %w", err))
		}
		rc, err := e.sign("/api/pulse", entry.Reply, reqHash, canon)
		if err != nil {
			return nil, e.problem(err)
		}
		out.Nodes[i].Receipt = &rc
	}
	return &reply[PulseAnswer]{Body: out}, nil
}

type airlockInput struct{ Body ai.AirlockRequest }

func (e *aiEdge) airlock(route, name string) func(context.Context, *airlockInput) (*reply[NodeAnswer], error) {
	return func(ctx context.Context, in *airlockInput) (*reply[NodeAnswer], error) {
		reqHash, err := receipt.HashJSON(fiberOf(ctx).Body())
		if err != nil {
			return nil, err
		}
		r, err := e.ask(ctx, name, in.Body.Message)
		if err != nil {
			return nil, err
		}
		a := NodeAnswer{Reply: r, Fresh: fresh()}
		rc, enc, err := e.signed(nil, route, r, reqHash, &a)
		if err != nil {
			return nil, e.problem(err)
		}
		a.Receipt, a.encoding = &rc, enc
		return &reply[NodeAnswer]{Body: a}, nil
	}
}

// ask asks the airlock node name.
func (e *aiEdge) ask(ctx context.Context, name, message string) (ai.Reply, error) {
	node, err := e.nodes.Airlock(name)
	if err != nil {
		return ai.Reply{}, e.problem(err)
	}
	r, err := node.Reply(ctx, message)
	if err != nil {
		return ai.Reply{}, e.problem(err)
	}
	return r, nil
}

// QueryParams are the query parameters of GET /api/v1/query.
type QueryParams struct {
	Question string `query:"question" required:"true" minLength:"1" maxLength:"2000" doc:"What to ask"`
	Node     string `query:"node" enum:"Ember,Lumen" doc:"Ember (S5_LOCUS, the default) or Lumen (S17_LUMEN)"`
}

type queryInput struct{ Body ai.QueryRequest }

func (e *aiEdge) queryGet(ctx context.Context, in *QueryParams) (*reply[QueryAnswer], error) {
	c := fiberOf(ctx)
	for key := range c.Request().URI().QueryArgs().All() {
		if k := string(key); k != "question" && k != "node" {
			return nil, problem(http.StatusBadRequest, "unknown-parameter",
				"/api/v1/query accepts the query parameters question and node, no other: "+airlockRefusal)
		}
	}
	params := map[string]string{"question": in.Question}
	if in.Node != "" {
		params["node"] = in.Node
	}
	data, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	reqHash, err := receipt.HashJSON(data)
	if err != nil {
		return nil, e.problem(err)
	}
	return e.query(ctx, in.Question, in.Node, reqHash)
}

func (e *aiEdge) queryPost(ctx context.Context, in *queryInput) (*reply[QueryAnswer], error) {
	reqHash, err := receipt.HashJSON(fiberOf(ctx).Body())
	if err != nil {
		return nil, err
	}
	return e.query(ctx, in.Body.Question, in.Body.Node, reqHash)
}

func (e *aiEdge) query(ctx context.Context, question, node, reqHash string) (*reply[QueryAnswer], error) {
	r, err := e.ask(ctx, cmp.Or(node, ai.DefaultAirlock), question)
	if err != nil {
		return nil, err
	}
	a := QueryAnswer{NodeAnswer: NodeAnswer{Reply: r, Fresh: fresh()}, Recorded: queryRecorded}
	rc, enc, err := e.signed(nil, "/api/v1/query", r, reqHash, &a)
	if err != nil {
		return nil, e.problem(err)
	}
	a.Receipt, a.encoding = &rc, enc
	e.queries.record(r.Node, rc.RequestSHA256, rc.ResponseSHA256)
	return &reply[QueryAnswer]{Body: a}, nil
}

// sign issues the answering node's receipt over the request's hash and
// canon, the RFC 8785 canonical JSON of the answer still without its
// receipt.
func (e *aiEdge) sign(route string, r ai.Reply, reqHash string, canon []byte) (receipt.Receipt, error) {
	key, ok := e.keys[r.Node]
	if !ok {
		return receipt.Receipt{}, fmt.Errorf("live: receipt: node %s has no key", r.Node)
	}
	return receipt.Issue(receipt.Fields{Route: route, Node: r.Node, Provider: string(r.Provider), Model: r.Model,
		RequestSHA256: reqHash, ResponseSHA256: sha256Hex(canon)}, key, time.Now(), nil)
}

// canonicalAnswer is a signed answer: it appends its canonical JSON,
// without its receipt, to out (see canonical.go).
type canonicalAnswer interface {
	appendCanonical(out []byte) []byte
}

// signed signs an answer and returns its encoding as it is sent: its
// canonical JSON with the receipt as its last member, written in buf's
// storage (nil: a buffer of its own). The answer is encoded once, and what it
// sends is byte for byte what its receipt covers.
func (e *aiEdge) signed(buf []byte, route string, r ai.Reply, reqHash string, body canonicalAnswer) (receipt.Receipt, []byte, error) {
	// Room for the answer and its receipt (640 bytes hold one whose model
	// name has 150 bytes).
	size := 1024 + len(r.Text) + len(r.Model) + len(r.Notice)
	for _, c := range r.Citations {
		size += 48 + len(c.Quote) + len(c.Ref) + len(c.Title) + len(c.URL)
	}
	out := body.appendCanonical(slices.Grow(buf[:0], size))
	rc, err := e.sign(route, r, reqHash, out)
	if err != nil {
		return rc, nil, err
	}
	out, err = rc.AppendJSON(append(out[:len(out)-1], `,"receipt":`...)) // an answer has members: a comma
	if err != nil {
		return rc, nil, fmt.Errorf("live: receipt: %w", err)
	}
	return rc, append(out, '}'), nil
}

// problem turns an error of live/ai, its voice or a receipt into the
// answer's problem. Provider failures carry the node, provider, model and
// a reason from a fixed vocabulary, never what the provider said. Other
// errors are logged and answered 500 without detail.
func (e *aiEdge) problem(err error) error {
	var re *receipt.Error
	switch {
	case errors.As(err, &re) && re.Field == "model":
		// The provider named its model in a form a receipt cannot carry.
		return problem(http.StatusBadGateway, "provider-failed", "the provider reported its model in a form that cannot be signed")
	case errors.Is(err, voice.ErrTimeout):
		return problem(http.StatusGatewayTimeout, "voice-timeout", "the speech was not ready in time; try a shorter text")
	case errors.Is(err, voice.ErrInvalidMode):
		return problem(http.StatusBadRequest, "invalid-request", "mode must be one of "+modeList())
	}
	return nodeProblem(e.log, err)
}

// nodeProblem turns an error of a node of live/ai into the answer's
// problem: 502 or 504 for a provider that failed or did not answer in
// time, naming the node, provider, model and a reason from a fixed
// vocabulary, never what the provider said; 400 for a text the node
// refused. Other errors are logged and answered 500 without detail.
func nodeProblem(log *slog.Logger, err error) error {
	var pe *ai.ProviderError
	switch {
	case errors.As(err, &pe):
		log.Warn("a provider failed", "node", pe.Node, "provider", string(pe.Provider), "model", pe.Model, "reason", string(pe.Reason), "status", pe.Status)
		what := fmt.Sprintf("%s could not answer: its provider (%s, model %s) failed: %s", pe.Node, pe.Provider, pe.Model, pe.Reason)
		if pe.Status != 0 {
			what += fmt.Sprintf(" (the provider answered HTTP %d)", pe.Status)
		}
		if errors.Is(err, ai.ErrProviderTimeout) {
			return problem(http.StatusGatewayTimeout, "provider-timeout", what+"; try again later")
		}
		return problem(http.StatusBadGateway, "provider-failed", what)
	case errors.Is(err, ai.ErrEmptyText):
		return problem(http.StatusBadRequest, "invalid-request", "the text is empty or only white space")
	case errors.Is(err, ai.ErrTextTooLong):
		return problem(http.StatusBadRequest, "invalid-request", "the text is too long")
	case errors.Is(err, ai.ErrInvalidText):
		return problem(http.StatusBadRequest, "invalid-request", "the text holds control characters other than tab and newline")
	case errors.Is(err, ai.ErrUnknownNode):
		return problem(http.StatusBadRequest, "invalid-request", "no such node on this route")
	}
	log.Error("ai route failed", "err", err)
	return err
}
