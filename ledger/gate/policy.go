package gate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// Action is an action class: what an orchestrator asks the gate about.
type Action string

// The action classes of the specification. A policy may name others; an
// action no policy names is denied.
const (
	PublicClaimChange Action = "PUBLIC_CLAIM_CHANGE" // changing a public claim or the proof surface's structure
	KeyRotation       Action = "KEY_ROTATION"        // replacing a signing key
	ExternalSend      Action = "EXTERNAL_SEND"       // sending on the federation's behalf to an outside party
	TrustRootRefresh  Action = "TRUST_ROOT_REFRESH"  // changing the keys or roots verifiers are told to trust
	CertAnchor        Action = "CERT_ANCHOR"         // anchoring a certification in the ledger
	HardDelete        Action = "HARD_DELETE"         // erasing data outright: always denied
)

// ValidAction reports whether s has the form of an action class: upper case
// letters, digits and _, starting with a letter, at most 64 bytes.
func ValidAction(s string) bool { return actionPattern.MatchString(s) }

// Control is a check an action class can require.
type Control string

// The controls. BRIDGE_AUTH is live; the others are roadmap controls whose
// readers do not exist yet: they evaluate to UNVERIFIABLE, never to
// SATISFIED, so an action that requires one is denied today.
const (
	BridgeAuth         Control = "BRIDGE_AUTH"
	NodeApprovalQuorum Control = "NODE_APPROVAL_QUORUM"
	DissentChannel     Control = "DISSENT_CHANNEL"
)

// ControlInfo describes a control: whether its reader exists, and what
// satisfies it.
type ControlInfo struct {
	Control Control
	Live    bool
	Summary string
}

var controls = []ControlInfo{
	{BridgeAuth, true, "live: an ed25519 signature by a pinned Bridge key over a canonical-JSON authorization that covers the request"},
	{NodeApprovalQuorum, false, "roadmap: no quorum reader exists yet; never counts as satisfied"},
	{DissentChannel, false, "roadmap: no dissent reader exists yet; never counts as satisfied"},
}

// Controls returns every control the checkpoint knows, live first.
func Controls() []ControlInfo { return slices.Clone(controls) }

// KnownControl reports whether c is a control the checkpoint knows.
func KnownControl(c Control) bool {
	return slices.ContainsFunc(controls, func(ci ControlInfo) bool { return ci.Control == c })
}

// State is the outcome of evaluating one control.
type State string

// The states of a control on the capability board.
const (
	Satisfied    State = "SATISFIED"    // checked, and it holds
	Failed       State = "FAILED"       // checked, and it does not hold
	Unverifiable State = "UNVERIFIABLE" // cannot be checked (roadmap); never counts as satisfied
)

// Decision is the checkpoint's answer.
type Decision string

// The two decisions. There is no third: anything not allowed is denied.
const (
	Allow Decision = "ALLOW"
	Deny  Decision = "DENY"
)

// ActionRule is one row of a policy: an action class and the controls it
// requires, all of which must be satisfied.
type ActionRule struct {
	Action   Action
	Requires []Control
}

// PolicyOptions configure NewPolicy.
type PolicyOptions struct {
	// Actions map action classes to their required controls; each needs at
	// least one known control. An action not listed is denied.
	Actions []ActionRule
	// Denied are denied unconditionally. HARD_DELETE is denied whether
	// listed or not, and may not appear in Actions.
	Denied []Action
	// BridgeKeys are the pinned Bridge public keys; BRIDGE_AUTH is satisfied
	// only by their signatures. None means BRIDGE_AUTH never holds. The
	// published demo key is refused.
	BridgeKeys []ledger.PublicKey
}

// Policy is a validated action table and the pinned Bridge keys. It is
// immutable and safe for concurrent use.
type Policy struct {
	rules  []ActionRule
	denied []Action
	keys   Keys
}

// NewPolicy checks opts: action names well formed and listed once, each
// listed action requiring at least one known control (an empty list would
// allow unconditionally), no action both required and denied, HARD_DELETE
// not allowable, and no demo key pinned.
func NewPolicy(opts PolicyOptions) (*Policy, error) {
	p, err := newPolicy(opts)
	if err != nil {
		return nil, err
	}
	if _, demo := p.keys[DemoKeyID()]; demo {
		return nil, fmt.Errorf("%w: the demo key %s is published and authorizes nothing; it cannot be pinned", ErrPolicy, DemoKeyID())
	}
	if _, demo := p.keys[demoOtherKey().ID()]; demo {
		return nil, fmt.Errorf("%w: the second demo key %s is published and cannot be pinned", ErrPolicy, demoOtherKey().ID())
	}
	return p, nil
}

// newPolicy is NewPolicy without the demo-key check, for the demo.
func newPolicy(opts PolicyOptions) (*Policy, error) {
	p := &Policy{keys: NewKeys(opts.BridgeKeys...)}
	seen := map[Action]bool{}
	for _, a := range opts.Denied {
		if !ValidAction(string(a)) {
			return nil, fmt.Errorf("%w: denied action %q is not an action class name", ErrPolicy, a)
		}
		if seen[a] {
			return nil, fmt.Errorf("%w: %s is denied twice", ErrPolicy, a)
		}
		seen[a] = true
		p.denied = append(p.denied, a)
	}
	if !seen[HardDelete] {
		p.denied = append(p.denied, HardDelete)
		seen[HardDelete] = true
	}
	for _, r := range opts.Actions {
		switch {
		case !ValidAction(string(r.Action)):
			return nil, fmt.Errorf("%w: %q is not an action class name", ErrPolicy, r.Action)
		case r.Action == HardDelete:
			return nil, fmt.Errorf("%w: %s is denied unconditionally; it cannot require controls", ErrPolicy, HardDelete)
		case slices.Contains(p.denied, r.Action):
			return nil, fmt.Errorf("%w: %s is both denied and mapped to controls", ErrPolicy, r.Action)
		case seen[r.Action]:
			return nil, fmt.Errorf("%w: %s is listed twice", ErrPolicy, r.Action)
		case len(r.Requires) == 0:
			return nil, fmt.Errorf("%w: %s requires no control, which would allow it unconditionally; deny it or name a control", ErrPolicy, r.Action)
		}
		seen[r.Action] = true
		var req []Control
		for _, c := range r.Requires {
			if !KnownControl(c) {
				return nil, fmt.Errorf("%w: %s requires unknown control %q", ErrPolicy, r.Action, c)
			}
			if slices.Contains(req, c) {
				return nil, fmt.Errorf("%w: %s requires %s twice", ErrPolicy, r.Action, c)
			}
			req = append(req, c)
		}
		p.rules = append(p.rules, ActionRule{Action: r.Action, Requires: req})
	}
	return p, nil
}

// Rules returns the action table in policy order.
func (p *Policy) Rules() []ActionRule {
	out := make([]ActionRule, len(p.rules))
	for i, r := range p.rules {
		out[i] = ActionRule{Action: r.Action, Requires: slices.Clone(r.Requires)}
	}
	return out
}

// Denied returns the actions denied unconditionally.
func (p *Policy) Denied() []Action { return slices.Clone(p.denied) }

// Keys returns the pinned Bridge keys.
func (p *Policy) Keys() Keys {
	ks := make(Keys, len(p.keys))
	for id, k := range p.keys {
		ks[id] = k
	}
	return ks
}

// Request is one question to the checkpoint: may Action be taken on Scope
// and the payload hashing to PayloadSHA256, with Authorization, at Now?
type Request struct {
	Action Action
	// Scope lists what the action touches (claim names, files). The
	// authorization's scope must hold every item, or equal the list exactly
	// when ExactScope is set.
	Scope      []string
	ExactScope bool
	// PayloadSHA256 is the SHA-256 of the payload the action applies to;
	// the authorization's payload_sha256 must equal it. Zero matches no
	// authorization.
	PayloadSHA256 ledger.Hash
	// Authorization is the signed artifact as presented (nil: none).
	Authorization []byte
	// Spent are authorization ids already used (the publish rule reads them
	// from the chain); presenting one again is ErrReplayed.
	Spent []string
	// Now is the clock. The zero time is an invalid request.
	Now time.Time
}

// ControlState is one row of the capability board an evaluation returns.
type ControlState struct {
	Control Control `json:"control"`
	State   State   `json:"state"`
	Live    bool    `json:"live"`
	Detail  string  `json:"detail"`
}

// Evaluation is the checkpoint's answer to a Request.
type Evaluation struct {
	Action    Action
	Decision  Decision
	Required  []Control      // what the action requires (none when it is unknown or denied)
	Satisfied []Control      // required and satisfied
	Missing   []Control      // required and not satisfied
	Board     []ControlState // every known control, evaluated for this request
	Errors    []*Error       // why the answer is DENY; empty on ALLOW
	// Authorization is the authorization whose signature verified under a
	// pinned key, even when it does not cover the request; nil otherwise.
	Authorization *Authorization
	At            time.Time // the request's clock
}

// Allowed reports whether the decision is ALLOW.
func (e Evaluation) Allowed() bool { return e.Decision == Allow }

// Err returns nil on ALLOW, and otherwise the reasons joined; errors.Is
// finds each sentinel.
func (e Evaluation) Err() error {
	if e.Allowed() {
		return nil
	}
	errs := make([]error, len(e.Errors))
	for i, err := range e.Errors {
		errs[i] = err
	}
	return joined(errs)
}

// joined is errors.Join with the reasons on one line each.
type joinedErr []error

func joined(errs []error) error { return joinedErr(errs) }

func (j joinedErr) Error() string {
	s := make([]string, len(j))
	for i, e := range j {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

func (j joinedErr) Unwrap() []error { return j }

// Evaluate answers req. It is pure: the clock and the keys are values, and
// it touches no store, file or network. The decision is ALLOW only when the
// request is valid, the action is listed, not denied, and every control it
// requires is SATISFIED; the board evaluates every known control whether
// required or not.
func (p *Policy) Evaluate(req Request) Evaluation {
	ev := Evaluation{Action: req.Action, Decision: Deny, At: req.Now}
	var reqErrs []*Error
	if req.Now.IsZero() {
		reqErrs = append(reqErrs, errorf(ErrInvalidRequest, "no clock"))
	}
	scope := slices.Clone(req.Scope)
	slices.Sort(scope)
	if err := checkScope(scope); err != nil {
		reqErrs = append(reqErrs, errorf(ErrInvalidRequest, "scope: %v", err))
	}

	bridge, auth, bridgeErrs := p.bridgeAuth(req, scope)
	ev.Authorization = auth
	for _, ci := range controls {
		cs := ControlState{Control: ci.Control, Live: ci.Live}
		switch ci.Control {
		case BridgeAuth:
			cs.State, cs.Detail = bridge, bridgeDetail(auth, bridgeErrs)
		default:
			cs.State, cs.Detail = Unverifiable, ci.Summary
		}
		ev.Board = append(ev.Board, cs)
	}

	ev.Errors = reqErrs
	switch rule, listed := p.rule(req.Action); {
	case slices.Contains(p.denied, req.Action):
		ev.Errors = append(ev.Errors, errorf(ErrDeniedAction, "%s can never be allowed", req.Action))
	case !listed:
		ev.Errors = append(ev.Errors, errorf(ErrUnknownAction, "%q is not in the policy; denied by default", req.Action))
	default:
		ev.Required = slices.Clone(rule.Requires)
		for _, c := range rule.Requires {
			if ev.state(c) == Satisfied {
				ev.Satisfied = append(ev.Satisfied, c)
				continue
			}
			ev.Missing = append(ev.Missing, c)
			if c == BridgeAuth {
				ev.Errors = append(ev.Errors, bridgeErrs...)
			} else {
				ev.Errors = append(ev.Errors, &Error{Err: ErrUnverifiable, Control: c, Detail: "roadmap control; an action that requires it is denied until its reader exists"})
			}
		}
	}
	if len(ev.Errors) == 0 && len(ev.Missing) == 0 && len(ev.Required) > 0 {
		ev.Decision = Allow
	}
	return ev
}

func (p *Policy) rule(a Action) (ActionRule, bool) {
	for _, r := range p.rules {
		if r.Action == a {
			return r, true
		}
	}
	return ActionRule{}, false
}

func (e Evaluation) state(c Control) State {
	for _, cs := range e.Board {
		if cs.Control == c {
			return cs.State
		}
	}
	return Unverifiable
}

// bridgeAuth evaluates BRIDGE_AUTH for req (scope sorted): the signature
// first (Verify), then time, action and scope, payload and replay, reporting
// every way a verified authorization misses the request.
func (p *Policy) bridgeAuth(req Request, scope []string) (State, *Authorization, []*Error) {
	fail := func(err error) (State, *Authorization, []*Error) {
		return Failed, nil, []*Error{{Err: sentinelOf(err), Control: BridgeAuth, Detail: detailOf(err)}}
	}
	if len(req.Authorization) == 0 {
		return fail(ErrNoAuthorization)
	}
	a, err := Verify(req.Authorization, p.keys)
	if err != nil {
		return fail(err)
	}
	var errs []*Error
	add := func(sentinel error, format string, args ...any) {
		errs = append(errs, &Error{Err: sentinel, Control: BridgeAuth, Detail: fmt.Sprintf(format, args...)})
	}
	switch {
	case req.Now.Before(a.IssuedAt):
		add(ErrNotYetValid, "issued_at %s is after %s", a.IssuedAt.Format(TimeFormat), req.Now.UTC().Format(time.RFC3339))
	case !req.Now.Before(a.ExpiresAt):
		add(ErrExpired, "expires_at %s is not after %s", a.ExpiresAt.Format(TimeFormat), req.Now.UTC().Format(time.RFC3339))
	}
	if a.Action != req.Action {
		add(ErrScope, "authorization %s is for %s, not %s", a.ID, a.Action, req.Action)
	} else if missing, extra := scopeDiff(a.Scope, scope); len(missing) > 0 || (req.ExactScope && len(extra) > 0) {
		msg := fmt.Sprintf("authorization %s covers %s", a.ID, listOrNone(a.Scope))
		if len(missing) > 0 {
			msg += "; not covered: " + strings.Join(missing, ", ")
		}
		if req.ExactScope && len(extra) > 0 {
			msg += "; exact scope required, not requested: " + strings.Join(extra, ", ")
		}
		add(ErrScope, "%s", msg)
	}
	if req.PayloadSHA256.IsZero() {
		add(ErrPayloadMismatch, "the request names no payload; the authorization is for payload %s", a.PayloadSHA256)
	} else if a.PayloadSHA256 != req.PayloadSHA256 {
		add(ErrPayloadMismatch, "authorized %s, requested %s", a.PayloadSHA256, req.PayloadSHA256)
	}
	if slices.Contains(req.Spent, a.ID) {
		add(ErrReplayed, "authorization %s was used before", a.ID)
	}
	if len(errs) > 0 {
		return Failed, &a, errs
	}
	return Satisfied, &a, nil
}

// scopeDiff returns the requested items the authorization lacks, and the
// authorized items the request does not name (both inputs sorted).
func scopeDiff(authorized, requested []string) (missing, extra []string) {
	for _, s := range requested {
		if _, ok := slices.BinarySearch(authorized, s); !ok {
			missing = append(missing, s)
		}
	}
	for _, s := range authorized {
		if _, ok := slices.BinarySearch(requested, s); !ok {
			extra = append(extra, s)
		}
	}
	return missing, extra
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "nothing (empty scope)"
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// sentinelOf finds the sentinel an error from Verify wraps.
func sentinelOf(err error) error {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.err
		}
	}
	return ErrMalformed
}

// detailOf is the error's text after its sentinel's prefix.
func detailOf(err error) string {
	s := sentinelOf(err)
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), s.Error()), ": ")
}

func bridgeDetail(a *Authorization, errs []*Error) string {
	if len(errs) == 0 && a != nil {
		return fmt.Sprintf("authorization %s signed by %s, valid until %s", a.ID, a.KeyID, a.ExpiresAt.Format(TimeFormat))
	}
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = (&Error{Err: e.Err, Detail: e.Detail}).Error()
	}
	return strings.Join(parts, "; ")
}
