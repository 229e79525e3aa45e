package towns

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/proofsite/proofsite/ledger"
)

// Limits of a wall signature, in characters.
const (
	MaxSignerRunes    = 64
	MaxSignatureRunes = 280
)

// SignatureDraft is what a visitor asks to sign.
type SignatureDraft struct {
	Signer  string
	Message string
}

// wallPayload is the payload of a wall_signature block, in RFC 8785
// canonical form. A signature made here carries its signer and message; a
// signature of the published history carries a signature_hash instead.
type wallPayload struct {
	Message       string `json:"message,omitempty"`
	Permanent     bool   `json:"permanent"`
	SignatureHash string `json:"signature_hash,omitempty"`
	Signer        string `json:"signer,omitempty"`
	Town          string `json:"town"`
}

// Witness names the chain block that records a signature or an exchange:
// anyone can find it in the public strict table, recompute its hash, and
// check that payload_hash is the SHA-256 of the payload published beside it.
type Witness struct {
	BlockIndex  int64       `json:"block_index"`
	BlockHash   ledger.Hash `json:"block_hash"`
	PrevHash    ledger.Hash `json:"prev_hash"`
	PayloadHash ledger.Hash `json:"payload_hash" doc:"The block's commitment: SHA-256 of the payload in RFC 8785 canonical form"`
}

func witnessOf(b ledger.Block) Witness {
	return Witness{BlockIndex: b.Index(), BlockHash: b.Hash(), PrevHash: b.PrevHash(), PayloadHash: b.Header().PayloadHash}
}

// Signature is one permanent signature of a wall.
type Signature struct {
	Town     string          `json:"town"`
	Signer   string          `json:"signer,omitempty" doc:"Absent for signatures of the published history, whose text was not published (their payload carries its hash)"`
	Message  string          `json:"message,omitempty"`
	SignedAt string          `json:"signed_at" doc:"The block's timestamp"`
	Payload  json.RawMessage `json:"payload" doc:"What the block commits to, in RFC 8785 canonical form: its SHA-256 is witness.payload_hash"`
	Witness  Witness         `json:"witness"`
}

// signatureOf makes a Signature of an indexed row.
func signatureOf(r wallRow) (Signature, error) {
	var p wallPayload
	if err := json.Unmarshal([]byte(r.payload), &p); err != nil {
		return Signature{}, fmt.Errorf("towns: wall signature at block %d: %w", r.witness.BlockIndex, err)
	}
	return Signature{Town: r.town, Signer: p.Signer, Message: p.Message, SignedAt: r.at, Payload: json.RawMessage(r.payload), Witness: r.witness}, nil
}

// decodeWallPayload checks that payload is what b commits to and decodes it.
func decodeWallPayload(b ledger.Block, payload []byte) (wallPayload, error) {
	var p wallPayload
	ph, canon, err := ledger.PayloadHash(payload)
	switch {
	case err != nil:
		return p, fmt.Errorf("towns: wall signature at block %d: %w", b.Index(), err)
	case ph != b.Header().PayloadHash || string(canon) != string(payload):
		return p, fmt.Errorf("towns: wall signature at block %d: the stored payload is not the canonical payload the block commits to", b.Index())
	}
	if err := json.Unmarshal(payload, &p); err != nil || p.Town == "" {
		return p, fmt.Errorf("towns: wall signature at block %d: payload names no town (%v)", b.Index(), err)
	}
	return p, nil
}

// Sign adds a permanent signature to a town's wall: it validates the draft
// (ErrInvalid as a *FieldError: lengths, control and bidirectional
// characters; nothing is written then), appends the block whose payload is
// the signature, and returns once the block is durable. The wall's index
// is written next; should that fail, the signature is still on the chain
// and the next Open indexes it.
func (t *Towns) Sign(ctx context.Context, id string, d SignatureDraft) (Signature, error) {
	tw, err := t.town(id)
	if err != nil {
		return Signature{}, err
	}
	signer, err := checkText("signer", d.Signer, MaxSignerRunes, false)
	if err != nil {
		return Signature{}, err
	}
	message, err := checkText("message", d.Message, MaxSignatureRunes, false)
	if err != nil {
		return Signature{}, err
	}
	payload, err := ledger.MarshalCanonical(wallPayload{Message: message, Permanent: true, Signer: signer, Town: tw.ID})
	if err != nil {
		return Signature{}, fmt.Errorf("towns: sign: %w", err)
	}
	b, err := t.opts.Chain.Append(ctx, ledger.Entry{Kind: KindWallSignature, Payload: payload,
		Description: "Wall signature in the " + tw.ID + " town."})
	if err != nil {
		return Signature{}, fmt.Errorf("%w: chain append of a wall signature: %w", ErrWrite, err)
	}
	r := wallRow{town: tw.ID, witness: witnessOf(b), at: b.Header().Timestamp, payload: string(payload)}
	if err := t.db.insertWall(context.WithoutCancel(ctx), t.db, r); err != nil {
		t.log.Warn("wall signature not indexed; the next start indexes it from the chain", "block", b.Index(), "err", err)
	} else {
		tw.wall.Add(1)
	}
	return Signature{Town: tw.ID, Signer: signer, Message: message, SignedAt: r.at, Payload: payload, Witness: r.witness}, nil
}

// Wall limits.
const (
	DefaultWallLimit = 100
	MaxWallLimit     = 1000
)

// Wall returns up to limit signatures of a town's wall, newest first, with
// a block index below before (0: from the newest). limit 0 means
// DefaultWallLimit; more than MaxWallLimit is cut.
func (t *Towns) Wall(ctx context.Context, id string, before int64, limit int) ([]Signature, error) {
	tw, err := t.town(id)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultWallLimit
	}
	rows, err := t.db.wall(ctx, tw.ID, before, min(limit, MaxWallLimit))
	if err != nil {
		return nil, fmt.Errorf("towns: wall of %s: %w", tw.ID, err)
	}
	out := make([]Signature, len(rows))
	for i, r := range rows {
		if out[i], err = signatureOf(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkText validates a text field and returns it trimmed of surrounding
// white space: not empty, at most max characters, and free of control
// characters (multiline allows tab, line feed and carriage return), of
// line and paragraph separators and of bidirectional formatting
// characters, which could make a text display as something else.
func checkText(field, s string, max int, multiline bool) (string, error) {
	if !utf8.ValidString(s) {
		return "", &FieldError{field, "is not valid UTF-8"}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", &FieldError{field, "is empty"}
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", &FieldError{field, fmt.Sprintf("has %d characters, at most %d are allowed", n, max)}
	}
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Bidi_Control, r):
			return "", &FieldError{field, fmt.Sprintf("holds the bidirectional formatting character %U", r)}
		case multiline && (r == '\n' || r == '\t' || r == '\r'):
		case unicode.IsControl(r):
			return "", &FieldError{field, fmt.Sprintf("holds the control character %U", r)}
		case r == '\u2028' || r == '\u2029':
			return "", &FieldError{field, fmt.Sprintf("holds the separator %U", r)}
		}
	}
	return s, nil
}
