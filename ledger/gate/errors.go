package gate

import (
	"errors"
	"fmt"
)

// Sentinel errors. An Evaluation lists the reasons for a DENY as *Error
// values wrapping one of these; callers branch with errors.Is, never on the
// text, and the JSON form carries each one's stable Code.
var (
	// ErrUnknownAction reports an action class the policy does not name:
	// denied by default.
	ErrUnknownAction = errors.New("gate: unknown action")
	// ErrDeniedAction reports an action the policy denies unconditionally
	// (HARD_DELETE always is): no authorization can allow it.
	ErrDeniedAction = errors.New("gate: action denied unconditionally")
	// ErrInvalidRequest reports a request the checkpoint cannot evaluate:
	// no clock, a malformed scope item.
	ErrInvalidRequest = errors.New("gate: invalid request")
	// ErrUnverifiable reports a required control whose reader does not exist
	// yet (a roadmap control): it is never satisfied.
	ErrUnverifiable = errors.New("gate: control cannot be verified yet")

	// ErrNoAuthorization reports a BRIDGE_AUTH requirement with no
	// authorization presented.
	ErrNoAuthorization = errors.New("gate: no authorization presented")
	// ErrMalformed reports an authorization that is not a well-formed signed
	// envelope, or whose signed content is not a strict, canonical
	// authorization (unknown, missing, duplicate or null members, values
	// not in their canonical form).
	ErrMalformed = errors.New("gate: malformed authorization")
	// ErrWrongKey reports an authorization signed by a key that is not a
	// pinned Bridge key (the demo key, for example).
	ErrWrongKey = errors.New("gate: authorization not signed by a pinned Bridge key")
	// ErrTampered reports an authorization whose signature does not verify
	// over its canonical bytes: something signed was changed.
	ErrTampered = errors.New("gate: authorization signature does not verify (tampered)")
	// ErrExpired reports an authorization at or past its expires_at.
	ErrExpired = errors.New("gate: authorization expired")
	// ErrNotYetValid reports an authorization before its issued_at.
	ErrNotYetValid = errors.New("gate: authorization not yet valid")
	// ErrScope reports an authorization for another action, or whose scope
	// does not cover (or, where exactness is required, equal) the request's.
	ErrScope = errors.New("gate: authorization scope does not cover the request")
	// ErrPayloadMismatch reports an authorization whose payload_sha256 is
	// not the hash of the payload the request acts on.
	ErrPayloadMismatch = errors.New("gate: authorization payload_sha256 does not match the payload")
	// ErrReplayed reports an authorization whose id has already been used.
	ErrReplayed = errors.New("gate: authorization already used")

	// ErrPolicy reports a policy NewPolicy refuses: an action without
	// controls, an unknown control, a HARD_DELETE that could be allowed, a
	// bad or demo Bridge key.
	ErrPolicy = errors.New("gate: invalid policy")
	// ErrInvalidClaims reports a claims document or decision record that
	// cannot be read.
	ErrInvalidClaims = errors.New("gate: invalid claims")
)

// codes are the stable names of the sentinels in JSON output, in the order
// Code tries them.
var codes = []struct {
	err  error
	code string
}{
	{ErrUnknownAction, "unknown_action"},
	{ErrDeniedAction, "denied_action"},
	{ErrInvalidRequest, "invalid_request"},
	{ErrUnverifiable, "unverifiable"},
	{ErrNoAuthorization, "no_authorization"},
	{ErrMalformed, "malformed"},
	{ErrWrongKey, "wrong_key"},
	{ErrTampered, "tampered"},
	{ErrExpired, "expired"},
	{ErrNotYetValid, "not_yet_valid"},
	{ErrScope, "scope"},
	{ErrPayloadMismatch, "payload_mismatch"},
	{ErrReplayed, "replayed"},
	{ErrPolicy, "policy"},
	{ErrInvalidClaims, "invalid_claims"},
}

// Code returns the stable name of the sentinel err wraps ("tampered",
// "expired", …), or "error".
func Code(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return "error"
}

// Error is one reason for a decision: the sentinel, the control it concerns
// (empty for reasons about the action itself) and a detail for people.
type Error struct {
	Err     error   // one of the sentinels above
	Control Control // the control at fault, if any
	Detail  string  // optional detail
}

// Error formats the reason as "CONTROL: sentinel: detail".
func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Control != "" {
		msg = string(e.Control) + ": " + msg
	}
	return msg
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func errorf(sentinel error, format string, args ...any) *Error {
	return &Error{Err: sentinel, Detail: fmt.Sprintf(format, args...)}
}
