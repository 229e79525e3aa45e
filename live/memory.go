package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/live/memory"
)

// MemoryStore is what the memory routes need of the nodes' memory;
// live/memory/dual's Store provides it.
type MemoryStore interface {
	// Put stores a memory durably in both stores, or returns a
	// *memory.WriteError naming the write that failed.
	Put(ctx context.Context, d memory.Draft) (memory.Stored, error)
	// Retrieve returns up to limit memories of node, newest first.
	Retrieve(ctx context.Context, node string, limit int) ([]memory.Memory, error)
	// Status is the health of the dual write.
	Status(ctx context.Context) memory.Status
}

// MemoryTokens authorizes POST /api/memory/store with bearer tokens
// checked against configured SHA-256 hashes (memory.Tokens).
type MemoryTokens struct{ memory.Tokens }

// Authorize implements Authorizer.
func (t MemoryTokens) Authorize(authorization string) (challenge, reason string, ok bool) {
	err := t.Check(authorization)
	switch {
	case err == nil:
		return "", "", true
	case errors.Is(err, memory.ErrNoToken):
		reason = "send a bearer token in the Authorization header (Authorization: Bearer TOKEN); a token in the query string is ignored"
	default:
		reason = "the bearer token is not one this server accepts"
	}
	return memory.Challenge(err), reason, false
}

var memoryTags = []string{"Memory"}

// storeBodyLimit bounds a store request: the largest body the server reads,
// so a memory's content may come near memory.MaxContentBytes.
const storeBodyLimit = MaxBodyBytes

// MemoryRecord is one memory as the routes publish it: its id, content_hash
// and canonical content derive from node_id and content, and the witness
// names the chain block whose payload_hash commits to
// {"content_hash","created_at","id","node_id"} (RFC 8785).
type MemoryRecord struct {
	Content     json.RawMessage `json:"content" doc:"The memory's content, one JSON value in RFC 8785 canonical form"`
	ContentHash ledger.Hash     `json:"content_hash" doc:"SHA-256 of content"`
	CreatedAt   string          `json:"created_at" doc:"UTC, six fractional digits"`
	ID          string          `json:"id" doc:"SHA-256 of the canonical JSON {\"content\":…,\"node_id\":…}: the same content for the same node is one memory"`
	NodeID      string          `json:"node_id"`
	Witness     memory.Witness  `json:"witness" doc:"The chain block that witnesses the memory (kind memory)"`
}

func memoryRecord(m memory.Memory) MemoryRecord {
	return MemoryRecord{Content: m.Content, ContentHash: m.ContentHash, CreatedAt: memory.FormatCreatedAt(m.CreatedAt),
		ID: m.ID, NodeID: m.NodeID, Witness: m.Witness}
}

// MemoryStatus is the health of the dual write at request time.
type MemoryStatus struct {
	memory.Status
	Fresh
}

// RetrieveInput selects a node's memories.
type RetrieveInput struct {
	NodeID string `path:"node_id" doc:"The node's id: its lowercase name, e.g. case" maxLength:"32" pattern:"^[a-z][a-z0-9_-]*$"`
	Limit  int    `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"How many memories, newest first"`
}

// Memories are one node's memories, newest first.
type Memories struct {
	NodeID   string         `json:"node_id"`
	Count    int            `json:"count" doc:"How many memories this response lists"`
	Memories []MemoryRecord `json:"memories"`
	Fresh
}

// StoreInput is a store request.
type StoreInput struct {
	Body struct {
		NodeID  string          `json:"node_id" minLength:"1" maxLength:"32" pattern:"^[a-z][a-z0-9_-]*$" doc:"The node the memory belongs to"`
		Content json.RawMessage `json:"content" doc:"One JSON value (not null), at most 64 KiB in RFC 8785 canonical form: an object, an array, or a string for plain text"`
	}
}

// StoreOutput is a stored memory: 201 when it was stored now, 200 when the
// same memory was stored before (with its first witness).
type StoreOutput struct {
	Status int
	Body   StoreResult
}

// StoreResult says what was stored.
type StoreResult struct {
	Memory  MemoryRecord `json:"memory"`
	Created bool         `json:"created" doc:"false when the same node and content were stored before: nothing new was written"`
	Fresh
}

var errNoMemory = problem(http.StatusServiceUnavailable, "unavailable", "this server runs without a memory store")

func (d *definition) registerMemory() {
	s := d.s
	get(d.proof, "/api/memory/status", "memory-status", "Memory system health and dual-write status: both stores, counts, outbox backlog, last reconciliation, divergent ids", memoryTags,
		func(ctx context.Context) (MemoryStatus, error) {
			if s.opts.Memory == nil {
				return MemoryStatus{}, errNoMemory
			}
			return MemoryStatus{Status: s.opts.Memory.Status(ctx), Fresh: fresh()}, nil
		})
	huma.Register(d.proof, huma.Operation{OperationID: "memory-retrieve", Method: http.MethodGet, Path: "/api/memory/retrieve/{node_id}",
		Summary: "Memories of one node, newest first", Tags: memoryTags, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable}},
		func(ctx context.Context, in *RetrieveInput) (*reply[Memories], error) {
			if s.opts.Memory == nil {
				return nil, errNoMemory
			}
			ms, err := s.opts.Memory.Retrieve(ctx, in.NodeID, in.Limit)
			if err != nil {
				return nil, memoryProblem(err)
			}
			out := Memories{NodeID: in.NodeID, Count: len(ms), Memories: make([]MemoryRecord, len(ms)), Fresh: fresh()}
			for i, m := range ms {
				out.Memories[i] = memoryRecord(m)
			}
			return &reply[Memories]{Body: out}, nil
		})
	Post(d.proof, huma.Operation{OperationID: "memory-store", Path: "/api/memory/store",
		Summary:     "Store a memory with dual-write (AUTH: bearer token)",
		Description: "Stores the memory in Badger and the SQL store, witnessed by a chain block, and answers only once both hold it durably. A failed write is 503 naming it (chain, primary or secondary); after a failed secondary write the memory waits in the outbox and the stores converge when the SQL store answers again (see /api/memory/status).",
		Tags:        memoryTags, Errors: []int{http.StatusUnprocessableEntity, http.StatusServiceUnavailable}},
		PostRoute{MaxBodyBytes: storeBodyLimit, Auth: s.opts.MemoryTokens},
		func(ctx context.Context, in *StoreInput) (*StoreOutput, error) {
			if s.opts.Memory == nil {
				return nil, errNoMemory
			}
			st, err := s.opts.Memory.Put(ctx, memory.Draft{NodeID: in.Body.NodeID, Content: in.Body.Content})
			if errors.Is(err, memory.ErrUnknownNode) {
				return nil, problem(http.StatusUnprocessableEntity, "unknown-node", "node_id names no node of the roster")
			}
			if err != nil {
				return nil, memoryProblem(err)
			}
			out := &StoreOutput{Status: http.StatusOK, Body: StoreResult{Memory: memoryRecord(st.Memory), Created: st.Created, Fresh: fresh()}}
			if st.Created {
				out.Status = http.StatusCreated
			}
			return out, nil
		})
}

// memoryProblem answers an error of the memory store.
func memoryProblem(err error) error {
	var we *memory.WriteError
	switch {
	case errors.As(err, &we):
		detail := fmt.Sprintf("the %s write (%s) of memory %s failed; ", we.Write, we.Backend, we.ID)
		switch we.Write {
		case memory.WriteSecondary:
			detail += "the memory is durable in the primary store and waits in its outbox: it reaches the SQL store when that store answers again (see /api/memory/status); storing it again retries that write"
		default:
			detail += "nothing was stored; retry later"
		}
		return problem(http.StatusServiceUnavailable, "write-failed", detail)
	case errors.Is(err, memory.ErrUnknownNode):
		return problem(http.StatusNotFound, "not-found", "no node of the roster has this id")
	case errors.Is(err, memory.ErrInvalid):
		return problem(http.StatusBadRequest, "invalid-request", publicInvalid(err))
	case errors.Is(err, memory.ErrClosed):
		return problem(http.StatusServiceUnavailable, "unavailable", "the memory store is closing")
	}
	return err
}

// publicInvalid says why a draft was refused without quoting it: the
// memory package's messages name the rule and may quote the node id.
func publicInvalid(err error) string {
	for _, rule := range []struct {
		err    error
		detail string
	}{
		{ledger.ErrDuplicateKey, "content repeats a member name in one object"},
		{ledger.ErrLoneSurrogate, "content holds a lone UTF-16 surrogate"},
		{ledger.ErrIntegerRange, "content holds an integer beyond ±(2^53−1)"},
		{ledger.ErrInvalidJSON, "content is not one well-formed JSON value"},
	} {
		if errors.Is(err, rule.err) {
			return rule.detail
		}
	}
	return fmt.Sprintf("node_id must be a short lowercase name and content one JSON value (not null) of at most %d bytes in canonical form", memory.MaxContentBytes)
}
