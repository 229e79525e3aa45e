package memory

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// MaxContentBytes bounds a memory's content, measured in its canonical
// (RFC 8785) form.
const MaxContentBytes = 64 << 10

// WitnessKind is the kind of the chain block that witnesses a memory.
const WitnessKind = "memory"

// CreatedAtLayout is the one form created_at takes everywhere (JSON, the
// witness payload, the SQL column): UTC with exactly six fractional digits,
// so that it round-trips through every store unchanged and sorts as text.
const CreatedAtLayout = "2006-01-02T15:04:05.000000Z"

// nodePattern is what a node id looks like: the roster's ids are short
// lowercase names (case, tars, plex, …).
var nodePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// CheckNodeID reports whether id is a well-formed node id (ErrInvalid
// otherwise): a short lowercase name such as case or tars.
func CheckNodeID(id string) error {
	if !nodePattern.MatchString(id) {
		return fmt.Errorf("%w: node_id %q must match %s", ErrInvalid, id, nodePattern)
	}
	return nil
}

// Draft is what a caller asks to remember: the node it belongs to and its
// content, one JSON value (an object, an array, a string for plain text, a
// number or a boolean; not null) of at most MaxContentBytes once
// canonicalized. The content must pass ledger.Canonicalize: valid UTF-8,
// no duplicate keys, integers within ±(2^53−1).
type Draft struct {
	NodeID  string          `json:"node_id"`
	Content json.RawMessage `json:"content"`
}

// Witness names the chain block that witnesses a memory. The block's kind
// is WitnessKind and its payload_hash is the SHA-256 of the canonical JSON
// {"content_hash":…,"created_at":…,"id":…,"node_id":…} of the memory.
type Witness struct {
	BlockIndex int64       `json:"block_index"`
	BlockHash  ledger.Hash `json:"block_hash"`
}

// Memory is one stored memory. Its JSON form is RFC 8785 canonical JSON:
//
//	{"content":…,"content_hash":"…","created_at":"2025-01-06T09:00:00.000000Z",
//	 "id":"…","node_id":"case","witness":{"block_hash":"…","block_index":201}}
//
// Everything but the witness and created_at is derived from the draft:
// content is the draft's content in canonical form, content_hash its
// SHA-256, and id the SHA-256 of the canonical JSON
// {"content":…,"node_id":…}, all in lowercase hex. Deriving the id from
// the content (rather than drawing a random ULID) makes a store idempotent:
// a client that retries after an error gets the memory it already stored,
// with its first witness, instead of a second copy and a second chain
// block; and anyone can recompute an id from what it names. Storing the
// same content for the same node twice therefore names one memory.
//
// Values come from New (and a store's Put, which adds the witness) or from
// decoding; Check tells whether the derived fields agree.
type Memory struct {
	ID          string
	NodeID      string
	Content     json.RawMessage
	ContentHash ledger.Hash
	CreatedAt   time.Time
	Witness     Witness
}

// Stored is the result of a store's Put.
type Stored struct {
	Memory Memory
	// Created is false when the memory was already stored (same node and
	// content): Memory is then the first one, with its first witness.
	Created bool
}

// record is the canonical JSON form of a Memory.
type record struct {
	Content     json.RawMessage `json:"content"`
	ContentHash ledger.Hash     `json:"content_hash"`
	CreatedAt   string          `json:"created_at"`
	ID          string          `json:"id"`
	NodeID      string          `json:"node_id"`
	Witness     Witness         `json:"witness"`
}

// witnessPayload is what the chain block of a memory commits to.
type witnessPayload struct {
	ContentHash ledger.Hash `json:"content_hash"`
	CreatedAt   string      `json:"created_at"`
	ID          string      `json:"id"`
	NodeID      string      `json:"node_id"`
}

// MarshalJSON encodes m as canonical JSON (see Memory).
func (m Memory) MarshalJSON() ([]byte, error) {
	return ledger.MarshalCanonical(record{
		Content: m.Content, ContentHash: m.ContentHash, CreatedAt: FormatCreatedAt(m.CreatedAt),
		ID: m.ID, NodeID: m.NodeID, Witness: m.Witness,
	})
}

// UnmarshalJSON decodes the form MarshalJSON writes; it accepts only
// canonical content and a created_at in that exact form, and does not
// check the derived fields (see Check).
func (m *Memory) UnmarshalJSON(data []byte) error {
	var r record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	t, err := ParseCreatedAt(r.CreatedAt)
	if err != nil {
		return err
	}
	*m = Memory{ID: r.ID, NodeID: r.NodeID, Content: r.Content, ContentHash: r.ContentHash, CreatedAt: t, Witness: r.Witness}
	return nil
}

// Hash returns the SHA-256 of m's canonical JSON: the value the stores and
// the reconciler compare.
func (m Memory) Hash() (ledger.Hash, error) {
	data, err := m.MarshalJSON()
	if err != nil {
		return ledger.Hash{}, fmt.Errorf("memory: hash %s: %w", m.ID, err)
	}
	return sha256.Sum256(data), nil
}

// Check reports whether the derived fields of m agree with its node and
// content (id, content_hash, canonical content). It says nothing of the
// witness; the reconciler checks that against the chain.
func (m Memory) Check() error {
	canon, err := ledger.Canonicalize(m.Content)
	if err != nil {
		return fmt.Errorf("%w: memory %s: content: %w", ErrCorrupt, m.ID, err)
	}
	if !bytes.Equal(canon, m.Content) {
		return fmt.Errorf("%w: memory %s: content is not canonical", ErrCorrupt, m.ID)
	}
	if sha256.Sum256(canon) != m.ContentHash {
		return fmt.Errorf("%w: memory %s: content_hash does not match the content", ErrCorrupt, m.ID)
	}
	if id, err := deriveID(m.NodeID, canon); err != nil || id != m.ID {
		return fmt.Errorf("%w: memory %s: id does not match node and content (%v)", ErrCorrupt, m.ID, err)
	}
	return nil
}

// WitnessPayload returns the canonical payload of m's chain block (see
// Witness).
func (m Memory) WitnessPayload() ([]byte, error) {
	return ledger.MarshalCanonical(witnessPayload{
		ContentHash: m.ContentHash, CreatedAt: FormatCreatedAt(m.CreatedAt), ID: m.ID, NodeID: m.NodeID,
	})
}

// CheckWitness reports whether b is the block that witnesses m (ErrWitness
// otherwise).
func (m Memory) CheckWitness(b ledger.Block) error {
	payload, err := m.WitnessPayload()
	if err != nil {
		return err
	}
	ph, _, err := ledger.PayloadHash(payload)
	switch {
	case err != nil:
		return err
	case b.Index() != m.Witness.BlockIndex || b.Hash() != m.Witness.BlockHash:
		return fmt.Errorf("%w: memory %s names block %d %s, the chain has %s there", ErrWitness, m.ID, m.Witness.BlockIndex, m.Witness.BlockHash, b.Hash())
	case b.Header().Kind != WitnessKind:
		return fmt.Errorf("%w: memory %s: block %d is of kind %q, not %q", ErrWitness, m.ID, b.Index(), b.Header().Kind, WitnessKind)
	case b.Header().PayloadHash != ph:
		return fmt.Errorf("%w: memory %s: block %d commits to payload %s, the memory hashes to %s", ErrWitness, m.ID, b.Index(), b.Header().PayloadHash, ph)
	}
	return nil
}

// deriveID returns the id of a memory of node with canonical content.
func deriveID(node string, canonContent []byte) (string, error) {
	data, err := ledger.MarshalCanonical(struct {
		Content json.RawMessage `json:"content"`
		NodeID  string          `json:"node_id"`
	}{canonContent, node})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// New validates d and returns the memory it describes, created at now,
// without a witness: ErrInvalid (wrapping the canonical-JSON error, if any)
// names what is wrong.
func New(d Draft, now time.Time) (Memory, error) {
	if err := CheckNodeID(d.NodeID); err != nil {
		return Memory{}, err
	}
	if len(d.Content) == 0 {
		return Memory{}, fmt.Errorf("%w: content is missing", ErrInvalid)
	}
	if len(d.Content) > 4*MaxContentBytes { // before spending work on it
		return Memory{}, fmt.Errorf("%w: content is %d bytes, the limit is %d (canonical)", ErrInvalid, len(d.Content), MaxContentBytes)
	}
	canon, err := ledger.Canonicalize(d.Content)
	if err != nil {
		return Memory{}, fmt.Errorf("%w: content: %w", ErrInvalid, err)
	}
	if string(canon) == "null" {
		return Memory{}, fmt.Errorf("%w: content is null", ErrInvalid)
	}
	if len(canon) > MaxContentBytes {
		return Memory{}, fmt.Errorf("%w: content is %d bytes in canonical form, the limit is %d", ErrInvalid, len(canon), MaxContentBytes)
	}
	id, err := deriveID(d.NodeID, canon)
	if err != nil {
		return Memory{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return Memory{
		ID: id, NodeID: d.NodeID, Content: canon, ContentHash: sha256.Sum256(canon),
		CreatedAt: now.UTC().Truncate(time.Microsecond),
	}, nil
}

// FormatCreatedAt writes t in CreatedAtLayout.
func FormatCreatedAt(t time.Time) string { return t.UTC().Format(CreatedAtLayout) }

// ParseCreatedAt reads exactly the form FormatCreatedAt writes (ErrCorrupt
// otherwise).
func ParseCreatedAt(s string) (time.Time, error) {
	t, err := time.Parse(CreatedAtLayout, s)
	if err != nil || FormatCreatedAt(t) != s {
		return time.Time{}, fmt.Errorf("%w: created_at %q is not of the form %s", ErrCorrupt, s, CreatedAtLayout)
	}
	return t, nil
}
