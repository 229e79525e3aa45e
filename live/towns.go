package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/proofsite/proofsite/live/towns"
)

var townTags = []string{"Towns"}

// The limits of the town routes that write (spec 8 names none): a wall
// signature is a permanent chain block, an exchange a chain block and a
// provider call; a town's chat is limited as /api/chat is.
var (
	SignLimit      = Limit{10, time.Hour}
	InterNodeLimit = Limit{10, time.Minute}
)

// Body limits of the town routes.
const (
	signBodyLimit = 2 << 10
	chatBodyLimit = 12 << 10
)

// TownList is every live town.
type TownList struct {
	Towns      []towns.Status `json:"towns"`
	LiveTowns  int            `json:"live_towns"`
	RosterSize int            `json:"roster_size" doc:"AI nodes on the roster: the live towns are those of the chat nodes"`
	Fresh
}

// TownInput names a town.
type TownInput struct {
	ID string `path:"id" maxLength:"32" doc:"The town's id: case, tars, plex, kipp or forge"`
}

// TownDetail is one town with its latest chat messages.
type TownDetail struct {
	towns.Status
	RecentMessages []towns.Message `json:"recent_messages" doc:"The last chat messages of the town, newest first (public: the town is a public space)"`
	Fresh
}

// recentMessages is how many chat messages a town's page shows.
const recentMessages = 10

// WallInput pages through a wall.
type WallInput struct {
	TownInput
	Limit  int   `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"How many signatures, newest first"`
	Before int64 `query:"before" minimum:"1" doc:"Only signatures whose block index is below this: the last block_index of the previous page"`
}

// Wall is a page of a town's wall.
type Wall struct {
	Town       string            `json:"town"`
	Total      int64             `json:"total" doc:"Signatures on the wall"`
	Signatures []towns.Signature `json:"signatures" doc:"Newest first"`
	Verify     string            `json:"verify"`
	Fresh
}

const wallVerify = "Each signature is a chain block of kind wall_signature. Find witness.block_index in /api/ledger/strict-table: " +
	"its hash and prev_hash are witness.block_hash and witness.prev_hash, and its payload_hash is the SHA-256 of payload " +
	"(RFC 8785 canonical JSON of message, permanent, signer and town)."

// SignInput is a wall signature.
type SignInput struct {
	TownInput
	Body struct {
		Signer  string `json:"signer" minLength:"1" maxLength:"64" doc:"Who signs, as it will be shown; at most 64 characters, no control or bidirectional formatting characters"`
		Message string `json:"message" minLength:"1" maxLength:"280" doc:"The signature's text; at most 280 characters on one line, no control or bidirectional formatting characters"`
	}
}

// Signed is a signature just added: it is on the chain.
type Signed struct {
	Signature towns.Signature `json:"signature"`
	Fresh
}

// SignOutput answers 201.
type SignOutput struct {
	Status int
	Body   Signed
}

// TownChatInput is a visitor's message.
type TownChatInput struct {
	TownInput
	Body struct {
		Message string `json:"message" minLength:"1" maxLength:"2000" doc:"At most 2000 characters; kept, with the reply, and shown in the town"`
	}
}

// TownChat is a chat exchange of a town.
type TownChat struct {
	towns.Message
	Fresh
}

// InterNodeInput is one node's message to another.
type InterNodeInput struct {
	TownInput
	Body struct {
		To      string `json:"to" maxLength:"32" doc:"The receiving town: another of case, tars, plex, kipp and forge"`
		Payload string `json:"payload" minLength:"1" maxLength:"2000" doc:"The message this town's node sends, text of at most 2000 characters; payload_hash is the SHA-256 of its UTF-8 bytes exactly as sent"`
	}
}

// InterNode is a witnessed exchange.
type InterNode struct {
	towns.Exchange
	Fresh
}

// InterNodeOutput answers 201.
type InterNodeOutput struct {
	Status int
	Body   InterNode
}

// nodeFailures is what the routes that need a node's answer say of its
// provider's failures.
const nodeFailures = " A provider that fails answers 502, one that does not answer within the node's timeout 504, and nothing is recorded then: the problem names the node, provider, model and a reason, never what the provider said."

// TownResponder answers the towns' chat and inter-node exchanges with the
// AI nodes: each town's node (a chat node of nodes) through its provider,
// given the town's memory and, in an exchange, the sending node
// (ai.Briefing). cmd passes it to towns.Open.
func TownResponder(nodes *ai.Registry) towns.Responder { return townNodes{nodes} }

type townNodes struct{ nodes *ai.Registry }

func (t townNodes) Reply(ctx context.Context, designation string, q towns.Question) (towns.Reply, error) {
	n, err := t.nodes.Chat(designation)
	if err != nil {
		return towns.Reply{}, fmt.Errorf("live: town node: %w", err)
	}
	r, err := n.ReplyWith(ctx, q.Message, ai.Briefing{Memory: q.Memory, From: q.From})
	if err != nil {
		return towns.Reply{}, err
	}
	return towns.Reply{Node: r.Node, Provider: string(r.Provider), Model: r.Model, Text: r.Text, Notice: r.Notice}, nil
}

var errNoTowns = problem(http.StatusServiceUnavailable, "unavailable", "this server runs without its towns")

func (d *definition) registerTowns() {
	s := d.s
	get(d.v1, "/api/v1/towns", "towns", "Every live town: node identity, live status, visitors, messages, wall signatures (5 of the 16 nodes have live towns)", townTags,
		func(context.Context) (TownList, error) {
			if s.opts.Towns == nil {
				return TownList{}, errNoTowns
			}
			l := TownList{Towns: s.opts.Towns.List(), Fresh: fresh()}
			l.LiveTowns = len(l.Towns)
			for _, n := range s.site.Nodes {
				if n.Kind == "ai" {
					l.RosterSize++
				}
			}
			return l, nil
		})
	visited := func() map[string]any { return map[string]any{clientKey: true} }
	huma.Register(d.v1, huma.Operation{OperationID: "town", Method: http.MethodGet, Path: "/api/v1/towns/{id}", Metadata: visited(),
		Summary: "One town's live status and its latest chat messages", Tags: townTags, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable}},
		func(ctx context.Context, in *TownInput) (*reply[TownDetail], error) {
			if err := s.visit(ctx, in.ID); err != nil {
				return nil, err
			}
			st, err := s.opts.Towns.Town(in.ID)
			if err != nil {
				return nil, s.townProblem(err)
			}
			msgs, err := s.opts.Towns.Messages(ctx, in.ID, recentMessages)
			if err != nil {
				return nil, err
			}
			return &reply[TownDetail]{Body: TownDetail{Status: st, RecentMessages: msgs, Fresh: fresh()}}, nil
		})
	huma.Register(d.v1, huma.Operation{OperationID: "town-wall", Method: http.MethodGet, Path: "/api/v1/towns/{id}/wall", Metadata: visited(),
		Summary: "A town's wall: permanent signatures, each a chain block", Tags: townTags, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable}},
		func(ctx context.Context, in *WallInput) (*reply[Wall], error) {
			if err := s.visit(ctx, in.ID); err != nil {
				return nil, err
			}
			sigs, err := s.opts.Towns.Wall(ctx, in.ID, in.Before, in.Limit)
			if err != nil {
				return nil, s.townProblem(err)
			}
			st, _ := s.opts.Towns.Town(in.ID)
			if sigs == nil {
				sigs = []towns.Signature{}
			}
			return &reply[Wall]{Body: Wall{Town: in.ID, Total: st.WallSignatures, Signatures: sigs, Verify: wallVerify, Fresh: fresh()}}, nil
		})
	Post(d.v1, huma.Operation{OperationID: "town-sign", Path: "/api/v1/towns/{id}/sign", Metadata: visited(),
		Summary:     "Sign a town's wall, permanently",
		Description: "Appends a chain block whose payload is the signature, and answers once it is durable. Signer and message are checked first (lengths; control, separator and bidirectional formatting characters are refused): a refused signature writes nothing.",
		Tags:        townTags, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable}},
		PostRoute{Limit: SignLimit, MaxBodyBytes: signBodyLimit},
		func(ctx context.Context, in *SignInput) (*SignOutput, error) {
			if err := s.visit(ctx, in.ID); err != nil {
				return nil, err
			}
			sig, err := s.opts.Towns.Sign(ctx, in.ID, towns.SignatureDraft{Signer: in.Body.Signer, Message: in.Body.Message})
			if err != nil {
				return nil, s.townProblem(err)
			}
			return &SignOutput{Status: http.StatusCreated, Body: Signed{Signature: sig, Fresh: fresh()}}, nil
		})
	Post(d.v1, huma.Operation{OperationID: "town-chat", Path: "/api/v1/towns/{id}/chat", Metadata: visited(),
		Summary:     "Chat with the town's node",
		Description: "The reply of the provider behind the town's node (the offline responder when it has no key), which receives the town's memory (its node's memories) with every message. The message and the reply are kept (across restarts) and shown in the town." + nodeFailures,
		Tags:        townTags, Errors: []int{http.StatusNotFound, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}},
		PostRoute{Limit: ChatLimit, MaxBodyBytes: chatBodyLimit},
		func(ctx context.Context, in *TownChatInput) (*reply[TownChat], error) {
			if err := s.visit(ctx, in.ID); err != nil {
				return nil, err
			}
			m, err := s.opts.Towns.Chat(ctx, in.ID, in.Body.Message)
			if err != nil {
				return nil, s.townProblem(err)
			}
			return &reply[TownChat]{Body: TownChat{Message: m, Fresh: fresh()}}, nil
		})
	Post(d.v1, huma.Operation{OperationID: "town-inter-node", Path: "/api/v1/towns/{id}/inter-node",
		Summary: "Send a message from this town's node to another's, witnessed on the chain",
		Description: "Body: to, the receiving town (another of the live towns), and payload, the message (text). The receiving node answers through its provider with its own town's memory; " +
			"the exchange is appended as a block of kind inter_node_exchange whose payload (record) commits to from, to (federation ids), request_id, payload_hash and response_hash. " +
			"Answers request_id, payload_hash (SHA-256 of payload), response_hash (SHA-256 of response.reply) and the ledger witness (block_index, block_hash, prev_hash, payload_hash = SHA-256 of record), once the block is durable. The receiving node is told which node sent the payload." + nodeFailures,
		Tags: townTags, Errors: []int{http.StatusNotFound, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}},
		PostRoute{Limit: InterNodeLimit, MaxBodyBytes: chatBodyLimit},
		func(ctx context.Context, in *InterNodeInput) (*InterNodeOutput, error) {
			if s.opts.Towns == nil {
				return nil, errNoTowns
			}
			ex, err := s.opts.Towns.Exchange(ctx, in.ID, towns.ExchangeRequest{To: in.Body.To, Payload: in.Body.Payload})
			if err != nil {
				return nil, s.townProblem(err)
			}
			return &InterNodeOutput{Status: http.StatusCreated, Body: InterNode{Exchange: ex, Fresh: fresh()}}, nil
		})
}

// clientKey marks the operations whose handlers read the client's address
// (Operation.Metadata), and keys that address in their context.
const clientKey = "live.client"

// clientOf returns the client address the pipeline put in ctx.
func clientOf(ctx context.Context) netip.Addr {
	a, _ := ctx.Value(clientKey).(netip.Addr)
	return a
}

// visit counts a visit of the request's client to a town.
func (s *Server) visit(ctx context.Context, id string) error {
	if s.opts.Towns == nil {
		return errNoTowns
	}
	if err := s.opts.Towns.Visit(ctx, id, clientOf(ctx)); err != nil && !errors.Is(err, towns.ErrUnknownTown) {
		s.log.Warn("visit not counted", "town", id, "err", err)
	}
	return nil
}

// townProblem answers an error of the towns.
func (s *Server) townProblem(err error) error {
	var fe *towns.FieldError
	switch {
	case errors.Is(err, towns.ErrUnknownTown):
		return problem(http.StatusNotFound, "not-found", "no live town has this id; the live towns are "+strings.Join(s.opts.Towns.IDs(), ", "))
	case errors.As(err, &fe):
		p := problem(http.StatusBadRequest, "invalid-request", fe.Field+" "+fe.Reason)
		p.Errors = []*huma.ErrorDetail{{Location: "body." + fe.Field, Message: fe.Reason}}
		return p
	case errors.Is(err, towns.ErrWrite):
		s.log.Error("town write failed", "err", err)
		return problem(http.StatusServiceUnavailable, "write-failed", "the write failed and nothing was recorded; retry later")
	case errors.Is(err, towns.ErrMemory):
		s.log.Error("town memory unavailable", "err", err)
		return problem(http.StatusServiceUnavailable, "unavailable", "the town's memory does not answer; retry later")
	case errors.Is(err, towns.ErrNoResponder):
		return problem(http.StatusServiceUnavailable, "unavailable", "no node answers on this server")
	}
	return nodeProblem(s.log, err)
}
