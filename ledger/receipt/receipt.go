// Package receipt issues and verifies the signed receipts that every
// gateway and airlock answer carries: a node's statement that it answered
// a given request with a given response, signed with the node's ed25519
// key.
//
// # The JSON form
//
// A receipt is one JSON object with exactly these ten members, every value
// a string:
//
//	receipt_id       32 lowercase hex digits (128 random bits)
//	route            the route that answered, e.g. "/api/ember"
//	node             the node's designation, e.g. "S5_LOCUS" ([A-Z0-9_], 1-32)
//	provider         who answered: "anthropic", "openai", "offline" ([a-z0-9_-], 1-32)
//	model            the model that answered (1-200 characters, no control characters)
//	request_sha256   64 lowercase hex digits: SHA-256 of the request (see HashJSON)
//	response_sha256  64 lowercase hex digits: SHA-256 of the response (see HashResponse)
//	issued_at        UTC time with milliseconds: "2026-11-21T10:04:05.123Z"
//	key_id           the signing key's id: "ed25519:" and 32 lowercase hex digits
//	signature        128 lowercase hex digits: the ed25519 signature
//
// The signature is over the payload: the RFC 8785 canonical JSON of the
// first eight members (everything except key_id and signature), as
// ledger.Canonicalize writes it. Issue writes receipts in canonical form
// too (Receipt.JSON), but a verifier accepts any JSON text that decodes to
// the same ten strings: member order and insignificant white space do not
// matter, every value does.
//
// request_sha256 is the SHA-256 of the RFC 8785 canonical form of the
// request's JSON body; response_sha256 is the same for the response's JSON
// body with its top-level "receipt" member removed (the receipt cannot
// cover itself). Anyone holding the two bodies can recompute both.
//
// # Verifying
//
// Verify checks, in order: the JSON and each member's form (ErrMalformed,
// naming the member), that key_id is a pinned node key (ErrUnknownKey) of
// the named node (ErrWrongNode), the signature over the payload
// (ErrSignature), and, when the caller supplies them, the request and
// response hashes (ErrRequestMismatch, ErrResponseMismatch). Any failure
// is an *Error naming the member; only a receipt that passes every check
// is returned as verified. The functions are pure: no clock, store or
// network.
package receipt

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/proofsite/proofsite/ledger"
)

// TimeLayout is the form of issued_at.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Receipt is a receipt's ten members. A Receipt built by hand verifies
// only if it was signed; Issue is the way to make one.
type Receipt struct {
	ReceiptID      string `json:"receipt_id" doc:"32 lowercase hex digits"`
	Route          string `json:"route" doc:"The route that answered"`
	Node           string `json:"node" doc:"Designation of the node that answered"`
	Provider       string `json:"provider" doc:"Who answered: anthropic, openai or offline"`
	Model          string `json:"model" doc:"The model that answered"`
	RequestSHA256  string `json:"request_sha256" doc:"SHA-256 of the RFC 8785 canonical request body"`
	ResponseSHA256 string `json:"response_sha256" doc:"SHA-256 of the RFC 8785 canonical response body without its receipt member"`
	IssuedAt       string `json:"issued_at" doc:"UTC, milliseconds: 2026-11-21T10:04:05.123Z"`
	KeyID          string `json:"key_id" doc:"The node key that signed: ed25519:<32 hex>"`
	Signature      string `json:"signature" doc:"ed25519 signature over the canonical JSON of the other members except key_id, 128 lowercase hex digits"`
}

// Fields are what the issuer states in a receipt.
type Fields struct {
	Route, Node, Provider, Model  string
	RequestSHA256, ResponseSHA256 string // from HashJSON and HashResponse
}

// Errors of Verify (and of Issue for bad fields). Each comes wrapped in an
// *Error naming the member.
var (
	ErrMalformed        = errors.New("receipt: malformed")
	ErrUnknownKey       = errors.New("receipt: unknown key")
	ErrWrongNode        = errors.New("receipt: key belongs to another node")
	ErrSignature        = errors.New("receipt: signature does not verify")
	ErrRequestMismatch  = errors.New("receipt: request does not match request_sha256")
	ErrResponseMismatch = errors.New("receipt: response does not match response_sha256")
)

// Error is a failed check: the member it concerns ("" for the receipt as
// a whole), the sentinel, and a detail that never repeats secret input.
type Error struct {
	Field  string
	Err    error
	Detail string
}

// Error names the check, the member and the detail.
func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Field != "" {
		msg += ": " + e.Field
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func fail(field string, err error, format string, args ...any) error {
	return &Error{Field: field, Err: err, Detail: fmt.Sprintf(format, args...)}
}

// The forms of the members.
var (
	hex32   = regexp.MustCompile(`^[0-9a-f]{32}$`)
	hex64   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hex128  = regexp.MustCompile(`^[0-9a-f]{128}$`)
	keyIDRe = regexp.MustCompile(`^ed25519:[0-9a-f]{32}$`)
	nodeRe  = regexp.MustCompile(`^[A-Z0-9_]{1,32}$`)
	provRe  = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)
	routeRe = regexp.MustCompile(`^/[A-Za-z0-9/_.-]{0,199}$`)
	// Members are the receipt's member names, in documentation order.
	Members = []string{"receipt_id", "route", "node", "provider", "model", "request_sha256", "response_sha256", "issued_at", "key_id", "signature"}
)

// maxModel bounds the model member, in characters.
const maxModel = 200

// check validates the form of every member.
func (r Receipt) check() error {
	for _, c := range []struct {
		field, value string
		ok           bool
	}{
		{"receipt_id", r.ReceiptID, hex32.MatchString(r.ReceiptID)},
		{"route", r.Route, routeRe.MatchString(r.Route)},
		{"node", r.Node, nodeRe.MatchString(r.Node)},
		{"provider", r.Provider, provRe.MatchString(r.Provider)},
		{"model", r.Model, validModel(r.Model)},
		{"request_sha256", r.RequestSHA256, hex64.MatchString(r.RequestSHA256)},
		{"response_sha256", r.ResponseSHA256, hex64.MatchString(r.ResponseSHA256)},
		{"issued_at", r.IssuedAt, validTime(r.IssuedAt)},
		{"key_id", r.KeyID, keyIDRe.MatchString(r.KeyID)},
		{"signature", r.Signature, hex128.MatchString(r.Signature)},
	} {
		if !c.ok {
			return fail(c.field, ErrMalformed, "not in the documented form")
		}
	}
	return nil
}

func validModel(s string) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxModel {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

func validTime(s string) bool {
	t, err := time.Parse(TimeLayout, s)
	return err == nil && t.UTC().Format(TimeLayout) == s
}

// Payload returns the signed bytes: the canonical JSON of the eight stated
// members. Their names are fixed and every value is a string, so it is
// written directly, names in RFC 8785 order (FuzzPayload holds it to
// ledger.MarshalCanonical).
func (r Receipt) Payload() ([]byte, error) {
	members := [...]struct{ name, value string }{
		{"issued_at", r.IssuedAt}, {"model", r.Model}, {"node", r.Node}, {"provider", r.Provider}, {"receipt_id", r.ReceiptID},
		{"request_sha256", r.RequestSHA256}, {"response_sha256", r.ResponseSHA256}, {"route", r.Route},
	}
	out := make([]byte, 0, 512)
	for i, m := range members {
		if !utf8.ValidString(m.value) {
			return nil, fmt.Errorf("receipt: payload: %s: %w", m.name, ledger.ErrInvalidUTF8)
		}
		out = append(out, ',')
		if i == 0 {
			out[0] = '{'
		}
		out = append(out, '"')
		out = append(out, m.name...)
		out = append(out, '"', ':')
		out = appendCanonicalString(out, m.value)
	}
	return append(out, '}'), nil
}

// appendCanonicalString appends s as RFC 8785 writes a string: quotation
// mark and backslash escaped, control characters as \b \t \n \f \r or
// \u00xx, everything else as it is.
func appendCanonicalString(out []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\b':
			out = append(out, '\\', 'b')
		case c == '\t':
			out = append(out, '\\', 't')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\f':
			out = append(out, '\\', 'f')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

// JSON returns the receipt as canonical JSON.
func (r Receipt) JSON() ([]byte, error) { return ledger.MarshalCanonical(r) }

// Issue makes a receipt for f, signed by key, issued at now. rand supplies
// the receipt id (crypto/rand when nil). Fields that Verify would refuse
// are refused here too.
func Issue(f Fields, key ledger.PrivateKey, now time.Time, rnd io.Reader) (Receipt, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var id [16]byte
	if _, err := io.ReadFull(rnd, id[:]); err != nil {
		return Receipt{}, fmt.Errorf("receipt: issue: receipt id: %w", err)
	}
	r := Receipt{
		ReceiptID: hex.EncodeToString(id[:]), Route: f.Route, Node: f.Node, Provider: f.Provider, Model: f.Model,
		RequestSHA256: f.RequestSHA256, ResponseSHA256: f.ResponseSHA256,
		IssuedAt: now.UTC().Format(TimeLayout), KeyID: string(key.ID()),
		Signature: hex.EncodeToString(make([]byte, 64)), // placeholder, checked for form below
	}
	if err := r.check(); err != nil {
		return Receipt{}, fmt.Errorf("receipt: issue: %w", err)
	}
	payload, err := r.Payload()
	if err != nil {
		return Receipt{}, fmt.Errorf("receipt: issue: %w", err)
	}
	sig := key.Sign(payload)
	r.Signature = hex.EncodeToString(sig[:])
	return r, nil
}

// HashJSON returns the hex SHA-256 of the RFC 8785 canonical form of a JSON
// text (the request_sha256 of a request body). Text Canonicalize refuses
// is an error.
func HashJSON(body []byte) (string, error) {
	canon, err := ledger.Canonicalize(body)
	if err != nil {
		return "", fmt.Errorf("receipt: hash: %w", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// HashResponse returns the response_sha256 of a JSON response body: the
// hash of its canonical form with the top-level "receipt" member removed.
// The body must be a JSON object.
func HashResponse(body []byte) (string, error) {
	if err := ledger.ValidateJSON(body); err != nil {
		return "", fmt.Errorf("receipt: hash response: %w", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return "", fmt.Errorf("receipt: hash response: %w: not a JSON object", ErrMalformed)
	}
	delete(obj, "receipt")
	rest, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("receipt: hash response: %w", err)
	}
	return HashJSON(rest)
}
