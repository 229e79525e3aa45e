package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Hash is a SHA-256 digest. It encodes as 64 lowercase hex digits.
type Hash [32]byte

// ParseHash parses 64 lowercase hex digits.
func ParseHash(s string) (Hash, error) {
	var h Hash
	if len(s) != 2*len(h) || s != toLowerHex(s) {
		return h, fmt.Errorf("%w: hash %q is not 64 lowercase hex digits", ErrInvalidBlock, s)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("%w: hash %q: %v", ErrInvalidBlock, s, err)
	}
	return h, nil
}

func toLowerHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// String returns the hash in lowercase hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is all zeros (the prev_hash of genesis).
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText encodes h as lowercase hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes 64 lowercase hex digits.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	*h = v
	return err
}

// Signature is an ed25519 signature. It encodes as 128 lowercase hex digits.
type Signature [64]byte

// String returns the signature in lowercase hex.
func (s Signature) String() string { return hex.EncodeToString(s[:]) }

// MarshalText encodes s as lowercase hex.
func (s Signature) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes 128 lowercase hex digits.
func (s *Signature) UnmarshalText(b []byte) error {
	if len(b) != 2*len(s) || string(b) != toLowerHex(string(b)) {
		return fmt.Errorf("%w: signature is not 128 lowercase hex digits", ErrInvalidBlock)
	}
	if _, err := hex.Decode(s[:], b); err != nil {
		return fmt.Errorf("%w: signature: %v", ErrInvalidBlock, err)
	}
	return nil
}

// PayloadHash canonicalizes a JSON payload and returns its SHA-256 together
// with the canonical bytes (the payload preimage).
func PayloadHash(payload []byte) (Hash, []byte, error) {
	canon, err := Canonicalize(payload)
	if err != nil {
		return Hash{}, nil, fmt.Errorf("payload: %w", err)
	}
	return sha256.Sum256(canon), canon, nil
}

// Header holds the public fields of a block that its hash covers. Its
// preimage is the RFC 8785 canonical JSON object with exactly these members:
//
//	{"index":N,"kind":"…","payload_hash":"…","prev_hash":"…","timestamp":"…","writer":"…"}
//
// index is an integer in [0, 2^53−1]; the hashes are 64 lowercase hex
// digits (prev_hash of genesis is 64 zeros); timestamp is RFC 3339 in UTC
// with a trailing "Z"; writer is the KeyID of the signing key.
type Header struct {
	Index       int64
	Timestamp   string
	Kind        string
	PayloadHash Hash
	PrevHash    Hash
	Writer      KeyID
}

// kindRule is the rule a kind follows, as messages state it; kindPattern
// checks it with an unbounded repetition and a length bound, since a bounded
// one ({0,63}) compiles to as many states at the start of every program.
const kindRule = `^[a-z][a-z0-9_.-]{0,63}$`

var kindPattern = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)

// validKind reports whether kind follows kindRule.
func validKind(kind string) bool { return len(kind) <= 64 && kindPattern.MatchString(kind) }

// FormatTimestamp returns t in the form a Header stores: RFC 3339 in UTC,
// with as many fractional digits as needed and none when t is whole seconds.
func FormatTimestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Validate checks the fields that a constructor controls: an index in range,
// a timestamp in the form FormatTimestamp writes, a kind of lowercase
// letters, digits and "_.-" starting with a letter (at most 64 bytes), and
// a prev_hash of zeros exactly for the genesis block.
func (h Header) Validate() error {
	switch {
	case h.Index < 0 || h.Index > maxSafeInteger:
		return fmt.Errorf("%w: index %d out of range", ErrInvalidBlock, h.Index)
	case !validKind(h.Kind):
		return fmt.Errorf("%w: kind %q must match %s", ErrInvalidBlock, h.Kind, kindRule)
	case (h.Index == 0) != h.PrevHash.IsZero():
		return fmt.Errorf("%w: only the genesis block (index 0) has a zero prev_hash", ErrInvalidBlock)
	case h.Writer == "":
		return fmt.Errorf("%w: missing writer", ErrInvalidBlock)
	}
	t, err := time.Parse(time.RFC3339Nano, h.Timestamp)
	if err != nil || FormatTimestamp(t) != h.Timestamp {
		return fmt.Errorf("%w: timestamp %q is not RFC 3339 UTC in canonical form", ErrInvalidBlock, h.Timestamp)
	}
	return nil
}

// Time returns the parsed timestamp (zero if it does not parse).
func (h Header) Time() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, h.Timestamp)
	return t
}

// Preimage returns the canonical JSON bytes the block hash covers.
func (h Header) Preimage() []byte { return h.appendPreimage(make([]byte, 0, 320)) }

// appendPreimage writes the RFC 8785 form by hand: the members in code-point
// order (all names are ASCII), strings with the JCS escapes, the index as a
// plain integer. A test checks it against Canonicalize for arbitrary
// headers.
func (h Header) appendPreimage(b []byte) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, h.Index, 10)
	b = append(b, `,"kind":`...)
	b = appendJCSString(b, h.Kind)
	b = append(b, `,"payload_hash":"`...)
	b = hex.AppendEncode(b, h.PayloadHash[:])
	b = append(b, `","prev_hash":"`...)
	b = hex.AppendEncode(b, h.PrevHash[:])
	b = append(b, `","timestamp":`...)
	b = appendJCSString(b, h.Timestamp)
	b = append(b, `,"writer":`...)
	b = appendJCSString(b, string(h.Writer))
	return append(b, '}')
}

// appendJCSString quotes s as RFC 8785 §3.2.2.2 requires: '"' and '\' are
// escaped, control characters use \b \t \n \f \r or \u00xx (lowercase hex),
// everything else is copied as UTF-8. s must be valid UTF-8.
func appendJCSString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, `\b`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\f':
			b = append(b, `\f`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// Hash returns SHA-256 of the header's preimage.
func (h Header) Hash() Hash {
	var buf [320]byte
	return sha256.Sum256(h.appendPreimage(buf[:0]))
}

// WitnessSignature is one witness's signature over a block hash.
type WitnessSignature struct {
	KeyID     KeyID     `json:"key_id"`
	Signature Signature `json:"signature"`
}

// Block is one sealed ledger entry: a header, its hash, the writer's
// signature and the witnesses' signatures. Its hash and signatures are set
// only by Seal (which computes them) and by DecodeBlock (which records what
// a file claims, for verification to check); callers cannot assign them.
// Block values are immutable and safe to share.
type Block struct {
	header    Header
	hash      Hash
	signature Signature
	witnesses []WitnessSignature
}

// Seal builds a block from h: it sets h.Writer to the writer's key id,
// validates the header, computes the hash and collects the signatures of the
// writer and of every witness over it.
func Seal(h Header, s Signers) (Block, error) {
	if s.Writer.priv == nil {
		return Block{}, fmt.Errorf("%w: no writer key", ErrInvalidKey)
	}
	h.Writer = s.Writer.ID()
	if err := h.Validate(); err != nil {
		return Block{}, err
	}
	b := Block{header: h, hash: h.Hash()}
	b.signature = s.Writer.Sign(b.hash[:])
	for _, w := range s.Witnesses {
		if w.ID() == s.Writer.ID() || slices.ContainsFunc(b.witnesses, func(ws WitnessSignature) bool { return ws.KeyID == w.ID() }) {
			return Block{}, fmt.Errorf("%w: witness %s listed twice", ErrInvalidKey, w.ID())
		}
		b.witnesses = append(b.witnesses, WitnessSignature{KeyID: w.ID(), Signature: w.Sign(b.hash[:])})
	}
	return b, nil
}

// Header returns the block's header.
func (b Block) Header() Header { return b.header }

// Index returns the block's index.
func (b Block) Index() int64 { return b.header.Index }

// Hash returns the hash the block carries: computed by Seal, or as read by
// DecodeBlock (which verification recomputes).
func (b Block) Hash() Hash { return b.hash }

// PrevHash returns the hash of the block this one links to.
func (b Block) PrevHash() Hash { return b.header.PrevHash }

// Signature returns the writer's signature.
func (b Block) Signature() Signature { return b.signature }

// Witnesses returns a copy of the witness signatures.
func (b Block) Witnesses() []WitnessSignature { return slices.Clone(b.witnesses) }

// IsZero reports whether b is the zero Block.
func (b Block) IsZero() bool { return b.hash.IsZero() && b.header.Writer == "" }

// blockJSON is the wire form of a block: the public metadata, in the order a
// reader expects. Descriptions and payloads are never part of it.
type blockJSON struct {
	Index       int64              `json:"index"`
	Timestamp   string             `json:"timestamp"`
	Kind        string             `json:"kind"`
	PayloadHash Hash               `json:"payload_hash"`
	PrevHash    Hash               `json:"prev_hash"`
	Writer      KeyID              `json:"writer"`
	Hash        Hash               `json:"hash"`
	Signature   Signature          `json:"signature"`
	Witnesses   []WitnessSignature `json:"witnesses"`
}

// blockFields lists the members of blockJSON; DecodeBlock requires exactly
// these.
var blockFields = []string{"index", "timestamp", "kind", "payload_hash", "prev_hash", "writer", "hash", "signature", "witnesses"}

func (b Block) wire() blockJSON {
	w := b.witnesses
	if w == nil {
		w = []WitnessSignature{}
	}
	return blockJSON{
		Index: b.header.Index, Timestamp: b.header.Timestamp, Kind: b.header.Kind,
		PayloadHash: b.header.PayloadHash, PrevHash: b.header.PrevHash, Writer: b.header.Writer,
		Hash: b.hash, Signature: b.signature, Witnesses: w,
	}
}

// Leaf returns the block's leaf in the ledger's Merkle tree (ledger/tlog):
// the RFC 8785 canonical JSON of its public metadata, the members of the
// export line in code-point order:
//
//	{"hash":"…","index":N,"kind":"…","payload_hash":"…","prev_hash":"…","signature":"…","timestamp":"…","witnesses":[{"key_id":"…","signature":"…"}],"writer":"…"}
//
// Like appendPreimage it is written by hand; a test checks it against
// Canonicalize.
func (b Block) Leaf() []byte { return b.appendLeaf(make([]byte, 0, 420+150*len(b.witnesses))) }

func (b Block) appendLeaf(out []byte) []byte {
	h := b.header
	out = append(out, `{"hash":"`...)
	out = hex.AppendEncode(out, b.hash[:])
	out = append(out, `","index":`...)
	out = strconv.AppendInt(out, h.Index, 10)
	out = append(out, `,"kind":`...)
	out = appendJCSString(out, h.Kind)
	out = append(out, `,"payload_hash":"`...)
	out = hex.AppendEncode(out, h.PayloadHash[:])
	out = append(out, `","prev_hash":"`...)
	out = hex.AppendEncode(out, h.PrevHash[:])
	out = append(out, `","signature":"`...)
	out = hex.AppendEncode(out, b.signature[:])
	out = append(out, `","timestamp":`...)
	out = appendJCSString(out, h.Timestamp)
	out = append(out, `,"witnesses":[`...)
	for i, w := range b.witnesses {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"key_id":`...)
		out = appendJCSString(out, string(w.KeyID))
		out = append(out, `,"signature":"`...)
		out = hex.AppendEncode(out, w.Signature[:])
		out = append(out, `"}`...)
	}
	out = append(out, `],"writer":`...)
	out = appendJCSString(out, string(h.Writer))
	return append(out, '}')
}

// MarshalJSON encodes the block's public metadata as one JSON object (the
// form of an export line).
func (b Block) MarshalJSON() ([]byte, error) { return json.Marshal(b.wire()) }

// DecodeBlock decodes one block from its JSON object. It is strict: the text
// must pass ValidateJSON (so no duplicate member and no invalid UTF-8),
// member names must match exactly (encoding/json alone would accept "KIND"
// for "kind"), every member must be present, none may be null and no other
// may appear, in the block and in each witness entry. It does not verify
// anything: the hash and signatures are what the input claims.
func DecodeBlock(data []byte) (Block, error) {
	row, err := decodeRow(data, false)
	return row.Block, err
}

// decodeRow decodes a block line, with the private members "description"
// and "payload" allowed when private is set. It checks member names while
// validating (one pass), then decodes into the wire struct once.
func decodeRow(data []byte, private bool) (Row, error) {
	var top, witnessKeys int
	var current string
	var hasPrivate bool
	err := validate(data, func(depth int, key string, first byte) error {
		if depth == 1 {
			current = key
			switch {
			case first == 'n':
				return fmt.Errorf("%w: member %q is null", ErrInvalidBlock, key)
			case slices.Contains(blockFields, key):
				top++
			case private && (key == "description" || key == "payload"):
				hasPrivate = true
			default:
				return fmt.Errorf("%w: unknown member %q", ErrInvalidBlock, key)
			}
			return nil
		}
		switch {
		case current == "payload":
			return nil // the payload is any JSON
		case current == "witnesses" && depth == 3 && (key == "key_id" || key == "signature") && first != 'n':
			witnessKeys++
			return nil
		}
		return fmt.Errorf("%w: unexpected member %q in %q", ErrInvalidBlock, key, current)
	})
	if err != nil {
		if !errors.Is(err, ErrInvalidBlock) {
			err = fmt.Errorf("%w: %w", ErrInvalidBlock, err)
		}
		return Row{}, err
	}
	if len(data) == 0 || bytes.TrimSpace(data)[0] != '{' {
		return Row{}, fmt.Errorf("%w: not a JSON object", ErrInvalidBlock)
	}
	if top != len(blockFields) {
		return Row{}, fmt.Errorf("%w: %d of the %d block members present", ErrInvalidBlock, top, len(blockFields))
	}
	var w rowJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return Row{}, fmt.Errorf("%w: %w", ErrInvalidBlock, err)
	}
	if witnessKeys != 2*len(w.Witnesses) {
		return Row{}, fmt.Errorf("%w: each witness needs key_id and signature", ErrInvalidBlock)
	}
	if w.Index < 0 || w.Index > maxSafeInteger {
		return Row{}, fmt.Errorf("%w: index %d out of range", ErrInvalidBlock, w.Index)
	}
	row := Row{Block: Block{
		header: Header{
			Index: w.Index, Timestamp: w.Timestamp, Kind: w.Kind,
			PayloadHash: w.PayloadHash, PrevHash: w.PrevHash, Writer: w.Writer,
		},
		hash:      w.Hash,
		signature: w.Signature,
		witnesses: w.Witnesses,
	}}
	if !hasPrivate {
		return row, nil
	}
	p := &Private{}
	if w.Description != nil {
		p.Description = *w.Description
	}
	if w.Payload != nil {
		p.Payload = w.Payload // checked against payload_hash by CheckRow
	}
	row.Private = p
	return row, nil
}

// objectMembers requires data (already checked by ValidateJSON) to be an
// object whose member names are all in required or optional, matched
// exactly, with every required member present, and returns the raw members.
func objectMembers(data []byte, required, optional []string) (map[string]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidBlock)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidBlock, err)
	}
	for name, raw := range members {
		if string(raw) == "null" {
			return nil, fmt.Errorf("%w: member %q is null", ErrInvalidBlock, name)
		}
		if !slices.Contains(required, name) && !slices.Contains(optional, name) {
			return nil, fmt.Errorf("%w: unknown member %q", ErrInvalidBlock, name)
		}
	}
	for _, name := range required {
		if _, ok := members[name]; !ok {
			return nil, fmt.Errorf("%w: missing member %q", ErrInvalidBlock, name)
		}
	}
	return members, nil
}
