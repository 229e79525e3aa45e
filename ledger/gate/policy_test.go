package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// sitePolicy is the policy of the repository's site.yaml, with the test
// Bridge keys.
func sitePolicyOptions() PolicyOptions {
	return PolicyOptions{
		Actions: []ActionRule{
			{PublicClaimChange, []Control{BridgeAuth}},
			{KeyRotation, []Control{BridgeAuth}},
			{ExternalSend, []Control{BridgeAuth}},
			{TrustRootRefresh, []Control{BridgeAuth}},
			{CertAnchor, []Control{BridgeAuth}},
			{"QUORUM_ACTION", []Control{BridgeAuth, NodeApprovalQuorum}},
			{"DISSENT_ACTION", []Control{DissentChannel}},
		},
		Denied:     []Action{HardDelete, "EXPORT_PRIVATE_MEMORY"},
		BridgeKeys: []ledger.PublicKey{bridge.Public(), bridge2.Public()},
	}
}

func mustPolicy(t testing.TB, opts PolicyOptions) *Policy {
	t.Helper()
	p, err := NewPolicy(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewPolicy(t *testing.T) {
	bridgeOnly := []Control{BridgeAuth}
	tests := []struct {
		desc string
		opts PolicyOptions
		want string // "" for success
	}{
		{"the site policy", sitePolicyOptions(), ""},
		{"empty: everything denied", PolicyOptions{}, ""},
		{"action without controls", PolicyOptions{Actions: []ActionRule{{KeyRotation, nil}}}, "requires no control"},
		{"unknown control", PolicyOptions{Actions: []ActionRule{{KeyRotation, []Control{"HUMAN_VIBES"}}}}, "unknown control"},
		{"control twice", PolicyOptions{Actions: []ActionRule{{KeyRotation, []Control{BridgeAuth, BridgeAuth}}}}, "twice"},
		{"action twice", PolicyOptions{Actions: []ActionRule{{KeyRotation, bridgeOnly}, {KeyRotation, bridgeOnly}}}, "listed twice"},
		{"bad action name", PolicyOptions{Actions: []ActionRule{{"key rotation", bridgeOnly}}}, "not an action class"},
		{"HARD_DELETE mapped", PolicyOptions{Actions: []ActionRule{{HardDelete, bridgeOnly}}}, "denied unconditionally"},
		{"denied and mapped", PolicyOptions{Actions: []ActionRule{{KeyRotation, bridgeOnly}}, Denied: []Action{KeyRotation}}, "both denied and mapped"},
		{"denied twice", PolicyOptions{Denied: []Action{HardDelete, HardDelete}}, "denied twice"},
		{"bad denied name", PolicyOptions{Denied: []Action{"x"}}, "not an action class"},
		{"demo key pinned", PolicyOptions{BridgeKeys: []ledger.PublicKey{DemoKey().Public()}}, "demo key"},
		{"second demo key pinned", PolicyOptions{BridgeKeys: []ledger.PublicKey{demoOtherKey().Public()}}, "demo key"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			p, err := NewPolicy(tc.opts)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(p.Denied(), HardDelete) {
					t.Error("HARD_DELETE is not denied")
				}
				return
			}
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ErrPolicy containing %q", err, tc.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	p := mustPolicy(t, sitePolicyOptions())
	a := testAuthorization()
	scope := a.Scope
	valid := mustSign(t, a, bridge)
	withAction := func(action Action) []byte {
		b := a
		b.Action = action
		return mustSign(t, b, bridge)
	}
	base := Request{Action: PublicClaimChange, Scope: scope, PayloadSHA256: payload, Authorization: valid, Now: t0}
	req := func(mod func(r *Request)) Request {
		r := base
		r.Scope = slices.Clone(base.Scope)
		mod(&r)
		return r
	}
	tampered, _ := tamper(valid, "scope", []string{"capability.maturity", "file:products/gate/README.md", "gate.bridge_keys"})

	tests := []struct {
		desc      string
		req       Request
		decision  Decision
		want      []error // sentinels among the reasons
		bridge    State   // BRIDGE_AUTH on the board
		satisfied []Control
		missing   []Control
	}{
		{"valid authorization", base, Allow, nil, Satisfied, []Control{BridgeAuth}, nil},
		{"signed by the second pinned key", req(func(r *Request) { r.Authorization = mustSign(t, a, bridge2) }), Allow, nil, Satisfied, []Control{BridgeAuth}, nil},
		{"valid from issued_at", req(func(r *Request) { r.Now = a.IssuedAt }), Allow, nil, Satisfied, []Control{BridgeAuth}, nil},
		{"request scope a subset", req(func(r *Request) { r.Scope = scope[:1] }), Allow, nil, Satisfied, []Control{BridgeAuth}, nil},
		{"request scope unsorted", req(func(r *Request) { r.Scope = []string{scope[1], scope[0]} }), Allow, nil, Satisfied, []Control{BridgeAuth}, nil},
		{"exact scope, equal", req(func(r *Request) { r.ExactScope = true }), Allow, nil, Satisfied, []Control{BridgeAuth}, nil},

		{"no authorization: deny by default", req(func(r *Request) { r.Authorization = nil }), Deny, []error{ErrNoAuthorization}, Failed, nil, []Control{BridgeAuth}},
		{"unknown action", req(func(r *Request) { r.Action = "LAUNCH" }), Deny, []error{ErrUnknownAction}, Failed, nil, nil},
		{"malformed action name", req(func(r *Request) { r.Action = "launch now" }), Deny, []error{ErrUnknownAction}, Failed, nil, nil},
		{"HARD_DELETE with a valid authorization for it", req(func(r *Request) { r.Action, r.Authorization = HardDelete, withAction(HardDelete) }), Deny, []error{ErrDeniedAction}, Satisfied, nil, nil},
		{"a denied action", req(func(r *Request) {
			r.Action, r.Authorization = "EXPORT_PRIVATE_MEMORY", withAction("EXPORT_PRIVATE_MEMORY")
		}), Deny, []error{ErrDeniedAction}, Satisfied, nil, nil},
		{"roadmap control required", req(func(r *Request) { r.Action, r.Authorization = "QUORUM_ACTION", withAction("QUORUM_ACTION") }), Deny, []error{ErrUnverifiable}, Satisfied, []Control{BridgeAuth}, []Control{NodeApprovalQuorum}},
		{"only a roadmap control required", req(func(r *Request) { r.Action = "DISSENT_ACTION" }), Deny, []error{ErrUnverifiable}, Failed, nil, []Control{DissentChannel}},
		{"malformed", req(func(r *Request) { r.Authorization = []byte("{") }), Deny, []error{ErrMalformed}, Failed, nil, []Control{BridgeAuth}},
		{"tampered", req(func(r *Request) { r.Authorization = tampered }), Deny, []error{ErrTampered}, Failed, nil, []Control{BridgeAuth}},
		{"wrong key", req(func(r *Request) { r.Authorization = mustSign(t, a, outside) }), Deny, []error{ErrWrongKey}, Failed, nil, []Control{BridgeAuth}},
		{"demo key", req(func(r *Request) { r.Authorization = mustSign(t, a, DemoKey()) }), Deny, []error{ErrWrongKey}, Failed, nil, []Control{BridgeAuth}},
		{"expired", req(func(r *Request) { r.Now = a.ExpiresAt }), Deny, []error{ErrExpired}, Failed, nil, []Control{BridgeAuth}},
		{"long expired", req(func(r *Request) { r.Now = a.ExpiresAt.AddDate(1, 0, 0) }), Deny, []error{ErrExpired}, Failed, nil, []Control{BridgeAuth}},
		{"not yet valid", req(func(r *Request) { r.Now = a.IssuedAt.Add(-time.Second) }), Deny, []error{ErrNotYetValid}, Failed, nil, []Control{BridgeAuth}},
		{"another action", req(func(r *Request) { r.Action = KeyRotation }), Deny, []error{ErrScope}, Failed, nil, []Control{BridgeAuth}},
		{"scope not covered", req(func(r *Request) { r.Scope = append(r.Scope, "gate.bridge_keys") }), Deny, []error{ErrScope}, Failed, nil, []Control{BridgeAuth}},
		{"exact scope, authorization wider", req(func(r *Request) { r.Scope, r.ExactScope = scope[:1], true }), Deny, []error{ErrScope}, Failed, nil, []Control{BridgeAuth}},
		{"payload mismatch", req(func(r *Request) { r.PayloadSHA256 = sha256.Sum256([]byte("x")) }), Deny, []error{ErrPayloadMismatch}, Failed, nil, []Control{BridgeAuth}},
		{"no payload named", req(func(r *Request) { r.PayloadSHA256 = ledger.Hash{} }), Deny, []error{ErrPayloadMismatch}, Failed, nil, []Control{BridgeAuth}},
		{"replayed", req(func(r *Request) { r.Spent = []string{"auth-0", a.ID} }), Deny, []error{ErrReplayed}, Failed, nil, []Control{BridgeAuth}},
		{"every miss reported", req(func(r *Request) {
			r.Now, r.Scope, r.PayloadSHA256, r.Spent = a.ExpiresAt, []string{"x"}, ledger.Hash{}, []string{a.ID}
		}), Deny, []error{ErrExpired, ErrScope, ErrPayloadMismatch, ErrReplayed}, Failed, nil, []Control{BridgeAuth}},
		{"no clock", req(func(r *Request) { r.Now = time.Time{} }), Deny, []error{ErrInvalidRequest, ErrNotYetValid}, Failed, nil, []Control{BridgeAuth}},
		{"bad scope item", req(func(r *Request) { r.Scope = []string{"a b"} }), Deny, []error{ErrInvalidRequest, ErrScope}, Failed, nil, []Control{BridgeAuth}},
		{"duplicate scope item", req(func(r *Request) { r.Scope = []string{scope[0], scope[0]} }), Deny, []error{ErrInvalidRequest}, Satisfied, []Control{BridgeAuth}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			ev := p.Evaluate(tc.req)
			if ev.Decision != tc.decision || ev.Allowed() != (tc.decision == Allow) {
				t.Fatalf("decision %s, want %s; reasons: %v", ev.Decision, tc.decision, ev.Err())
			}
			if tc.decision == Allow {
				if ev.Err() != nil || len(ev.Errors) != 0 {
					t.Errorf("ALLOW with reasons: %v", ev.Err())
				}
			} else if ev.Err() == nil || len(ev.Errors) == 0 {
				t.Error("DENY without a reason")
			}
			for _, want := range tc.want {
				if !errors.Is(ev.Err(), want) {
					t.Errorf("reasons %v do not include %v", ev.Err(), want)
				}
			}
			if len(ev.Errors) != len(tc.want) {
				t.Errorf("%d reasons, want %d: %v", len(ev.Errors), len(tc.want), ev.Err())
			}
			if !slices.Equal(ev.Satisfied, tc.satisfied) || !slices.Equal(ev.Missing, tc.missing) {
				t.Errorf("satisfied %v missing %v, want %v and %v", ev.Satisfied, ev.Missing, tc.satisfied, tc.missing)
			}
			// The board: every control, the roadmap ones never satisfied.
			if len(ev.Board) != 3 {
				t.Fatalf("board %v", ev.Board)
			}
			for _, cs := range ev.Board {
				want := Unverifiable
				if cs.Control == BridgeAuth {
					want = tc.bridge
				}
				if cs.State != want || cs.Detail == "" {
					t.Errorf("board: %s is %s (%q), want %s", cs.Control, cs.State, cs.Detail, want)
				}
			}
		})
	}
}

func TestEvaluationOutput(t *testing.T) {
	p := mustPolicy(t, sitePolicyOptions())
	allow := p.Evaluate(Request{Action: PublicClaimChange, Scope: testAuthorization().Scope, PayloadSHA256: payload, Authorization: mustSign(t, testAuthorization(), bridge), Now: t0})
	deny := p.Evaluate(Request{Action: PublicClaimChange, PayloadSHA256: payload, Now: t0})

	var got struct {
		Action    string   `json:"action"`
		Decision  string   `json:"decision"`
		Required  []string `json:"required"`
		Satisfied []string `json:"satisfied"`
		Missing   []string `json:"missing"`
		Board     []struct {
			Control, State, Detail string
			Live                   bool
		} `json:"board"`
		Errors []struct {
			Code, Control, Message string
		} `json:"errors"`
		Authorization map[string]any `json:"authorization"`
		EvaluatedAt   string         `json:"evaluated_at"`
	}
	data, err := json.Marshal(deny)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if got.Decision != "DENY" || got.Satisfied == nil || len(got.Errors) != 1 || got.Errors[0].Code != "no_authorization" ||
		got.Errors[0].Control != "BRIDGE_AUTH" || got.Authorization != nil || got.EvaluatedAt != "2026-03-01T12:00:00Z" ||
		len(got.Board) != 3 || !got.Board[0].Live || got.Board[1].Live || got.Board[1].State != "UNVERIFIABLE" {
		t.Errorf("deny JSON:\n%s", data)
	}
	data, _ = json.Marshal(allow)
	got.Authorization = nil
	json.Unmarshal(data, &got)
	if got.Decision != "ALLOW" || len(got.Errors) != 0 || got.Authorization["authorization_id"] != "auth-1" || got.Authorization["key_id"] != string(bridge.ID()) {
		t.Errorf("allow JSON:\n%s", data)
	}

	var text bytes.Buffer
	deny.WriteText(&text)
	for _, want := range []string{"decision   DENY\n", "missing    BRIDGE_AUTH\n", "NODE_APPROVAL_QUORUM  UNVERIFIABLE", "[no_authorization] BRIDGE_AUTH: gate: no authorization presented"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	text.Reset()
	allow.WriteText(&text)
	if !strings.Contains(text.String(), "decision   ALLOW\n") || !strings.Contains(text.String(), "presented  auth-1: PUBLIC_CLAIM_CHANGE") || strings.Contains(text.String(), "reasons") {
		t.Errorf("allow text:\n%s", text.String())
	}
	for _, err := range deny.Errors {
		if Code(err) == "error" {
			t.Errorf("no code for %v", err)
		}
	}
	if Code(errors.New("other")) != "error" {
		t.Error("Code of a foreign error")
	}
}

func TestControls(t *testing.T) {
	cs := Controls()
	if len(cs) != 3 || cs[0].Control != BridgeAuth || !cs[0].Live || cs[1].Live || cs[2].Live {
		t.Errorf("controls %+v", cs)
	}
	if !KnownControl(DissentChannel) || KnownControl("X") {
		t.Error("KnownControl")
	}
	if !ValidAction("PUBLIC_CLAIM_CHANGE") || ValidAction("public") || ValidAction("") {
		t.Error("ValidAction")
	}
}
