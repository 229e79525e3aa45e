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
	"strings"
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

// Members are the receipt's member names, in documentation order.
var Members = []string{"receipt_id", "route", "node", "provider", "model", "request_sha256", "response_sha256", "issued_at", "key_id", "signature"}

// The forms of the members, as byte classes: every receipt issued or
// verified is checked, so they are plain loops rather than regular
// expressions (TestForms holds them to the documented patterns).
func lowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }
func nodeByte(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' }
func provByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
func routeByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '/' || c == '_' || c == '.' || c == '-'
}

// form reports whether s is min to max bytes, each in class.
func form(s string, minLen, maxLen int, class func(byte) bool) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !class(s[i]) {
			return false
		}
	}
	return true
}

func isHex(s string, n int) bool { return form(s, n, n, lowerHex) }

// validNode is ^[A-Z0-9_]{1,32}$.
func validNode(s string) bool { return form(s, 1, 32, nodeByte) }

// validRoute is ^/[A-Za-z0-9/_.-]{0,199}$.
func validRoute(s string) bool { return len(s) > 0 && s[0] == '/' && form(s[1:], 0, 199, routeByte) }

// validKeyID is ^ed25519:[0-9a-f]{32}$.
func validKeyID(s string) bool {
	hex, ok := strings.CutPrefix(s, "ed25519:")
	return ok && isHex(hex, 32)
}

// maxModel bounds the model member, in characters.
const maxModel = 200

// check validates the form of every member, in documentation order.
func (r Receipt) check() error {
	if !isHex(r.ReceiptID, 32) {
		return malformed("receipt_id")
	}
	if err := r.checkStated(); err != nil {
		return err
	}
	switch {
	case !validTime(r.IssuedAt):
		return malformed("issued_at")
	case !validKeyID(r.KeyID):
		return malformed("key_id")
	case !isHex(r.Signature, 128):
		return malformed("signature")
	}
	return nil
}

// checkStated validates the form of the members an issuer states
// (Fields), in documentation order. Issue checks these and key_id: it
// builds receipt_id, issued_at and signature itself, in their form.
func (r Receipt) checkStated() error {
	switch {
	case !validRoute(r.Route):
		return malformed("route")
	case !validNode(r.Node):
		return malformed("node")
	case !form(r.Provider, 1, 32, provByte):
		return malformed("provider")
	case !validModel(r.Model):
		return malformed("model")
	case !isHex(r.RequestSHA256, 64):
		return malformed("request_sha256")
	case !isHex(r.ResponseSHA256, 64):
		return malformed("response_sha256")
	}
	return nil
}

func malformed(field string) error { return fail(field, ErrMalformed, "not in the documented form") }

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

// validTime reports whether s is a time in TimeLayout: digits where the
// layout has them (so no sign, space or short field), and a real date and
// time of day, which then writes back as s.
func validTime(s string) bool {
	if len(s) != len(TimeLayout) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if l := TimeLayout[i]; '0' <= l && l <= '9' {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		} else if s[i] != l {
			return false
		}
	}
	_, err := time.Parse(TimeLayout, s)
	return err == nil
}

// Payload returns the signed bytes: the canonical JSON of the eight stated
// members. Their names are fixed and every value is a string, so it is
// written directly, names in RFC 8785 order (FuzzPayload holds it to
// ledger.MarshalCanonical).
func (r Receipt) Payload() ([]byte, error) { return r.appendCanonical(make([]byte, 0, 512), false) }

// AppendJSON appends the receipt, all ten members, as canonical JSON to
// dst, written directly as Payload is.
func (r Receipt) AppendJSON(dst []byte) ([]byte, error) { return r.appendCanonical(dst, true) }

// JSON returns the receipt as canonical JSON.
func (r Receipt) JSON() ([]byte, error) { return r.AppendJSON(nil) }

// appendCanonical appends the canonical JSON object of the payload's
// members, and of key_id and signature when signed.
func (r Receipt) appendCanonical(out []byte, signed bool) ([]byte, error) {
	members := [...]struct {
		name, value string
		signed      bool // not part of the payload
	}{
		{"issued_at", r.IssuedAt, false}, {"key_id", r.KeyID, true}, {"model", r.Model, false}, {"node", r.Node, false},
		{"provider", r.Provider, false}, {"receipt_id", r.ReceiptID, false}, {"request_sha256", r.RequestSHA256, false},
		{"response_sha256", r.ResponseSHA256, false}, {"route", r.Route, false}, {"signature", r.Signature, true},
	}
	out = append(out, '{')
	first := true
	for _, m := range members {
		if m.signed && !signed {
			continue
		}
		if !utf8.ValidString(m.value) {
			return nil, fmt.Errorf("receipt: payload: %s: %w", m.name, ledger.ErrInvalidUTF8)
		}
		if !first {
			out = append(out, ',')
		}
		first = false
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
		plain := i // the bytes from here to the next one to escape go as they are
		for i < len(s) && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' {
			i++
		}
		out = append(out, s[plain:i]...)
		if i == len(s) {
			break
		}
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
		default: // another control character
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	return append(out, '"')
}

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
		ReceiptID: hexString(id[:]), Route: f.Route, Node: f.Node, Provider: f.Provider, Model: f.Model,
		RequestSHA256: f.RequestSHA256, ResponseSHA256: f.ResponseSHA256,
		IssuedAt: now.UTC().Format(TimeLayout), KeyID: string(key.ID()),
	}
	err := r.checkStated()
	if err == nil && !validKeyID(r.KeyID) {
		err = malformed("key_id") // a zero key
	}
	if err != nil {
		return Receipt{}, fmt.Errorf("receipt: issue: %w", err)
	}
	payload, err := r.Payload()
	if err != nil {
		return Receipt{}, fmt.Errorf("receipt: issue: %w", err)
	}
	sig := key.Sign(payload)
	r.Signature = hexString(sig[:])
	return r, nil
}

// hexString is hex.EncodeToString with one allocation instead of two, for
// at most 64 bytes (a receipt is issued on every answer).
func hexString(b []byte) string {
	var buf [128]byte
	dst := buf[:hex.EncodedLen(len(b))]
	hex.Encode(dst, b)
	return string(dst)
}

// HashJSON returns the hex SHA-256 of the RFC 8785 canonical form of a JSON
// text (the request_sha256 of a request body). Text Canonicalize refuses
// is an error.
func HashJSON(body []byte) (string, error) {
	_, sum, err := CanonicalHash(body)
	return sum, err
}

// CanonicalHash returns the RFC 8785 canonical form of a JSON text and
// HashJSON's hash of it, for an issuer that also sends the canonical form.
func CanonicalHash(body []byte) (canon []byte, sha string, err error) {
	canon, err = ledger.Canonicalize(body)
	if err != nil {
		return nil, "", fmt.Errorf("receipt: hash: %w", err)
	}
	sum := sha256.Sum256(canon)
	return canon, hex.EncodeToString(sum[:]), nil
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
