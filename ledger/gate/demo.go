package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// DemoSeedText is published: SHA-256 of it is the ed25519 seed of the demo
// key, so anyone can reproduce the demo's signatures. For the same reason
// the demo key authorizes nothing outside the demo, and NewPolicy refuses
// to pin it.
const DemoSeedText = "proofsite gate demo key v1: published, authorizes nothing outside the demo"

// demoOtherSeedText seeds the second demo key, the "wrong key" of the demo.
const demoOtherSeedText = DemoSeedText + " (second key, pinned nowhere)"

// DemoClock is the demo's fixed clock.
var DemoClock = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func seededKey(text string) ledger.PrivateKey {
	seed := sha256.Sum256([]byte(text))
	k, err := ledger.NewPrivateKeyFromSeed(seed[:])
	if err != nil {
		panic(err) // a 32-byte seed always makes a key
	}
	return k
}

var (
	demoKey      = sync.OnceValue(func() ledger.PrivateKey { return seededKey(DemoSeedText) })
	demoOtherKey = sync.OnceValue(func() ledger.PrivateKey { return seededKey(demoOtherSeedText) })
)

// DemoKey returns the labelled demo key. Its private half is public
// knowledge (DemoSeedText).
func DemoKey() ledger.PrivateKey { return demoKey() }

// DemoKeyID returns the demo key's id.
func DemoKeyID() ledger.KeyID { return demoKey().ID() }

// BoardRow is one row of the published maturity board, shown at the end of
// the demo.
type BoardRow struct {
	Key, Value string
}

// DemoOptions configure Demo.
type DemoOptions struct {
	// Policy is the site's policy. The demo runs its action table with the
	// demo key pinned in place of the Bridge keys, and shows the Bridge keys
	// rejecting a demo signature.
	Policy PolicyOptions
	// Board is the published maturity board.
	Board []BoardRow
	// Source names where the policy and the board come from, for the
	// header (e.g. "site.yaml").
	Source string
}

// The demo's fixed inputs.
const (
	demoAuthorizationID = "demo-0001"
	demoClaim           = "capability.bridge_auth"
	demoPayload         = `{"claim":"capability.bridge_auth","value":"live_and_proven"}`
	demoUnknownAction   = "REWRITE_HISTORY"
	demoQuorumAction    = "DEMO_QUORUM_ACTION"
)

// Demo runs the checkpoint through the four parts of the published
// transcript — deny by default, allow with a Bridge authorization, tamper
// rejection, the capability board — and returns the transcript. The key
// and clock are fixed and ed25519 signing is deterministic, so the same
// options give the same bytes.
func Demo(opts DemoOptions) ([]byte, error) {
	site, err := NewPolicy(opts.Policy)
	if err != nil {
		return nil, err
	}
	key := DemoKey()
	demo, err := newPolicy(PolicyOptions{Actions: opts.Policy.Actions, Denied: opts.Policy.Denied, BridgeKeys: []ledger.PublicKey{key.Public()}})
	if err != nil {
		return nil, err
	}
	payload := sha256.Sum256([]byte(demoPayload))
	auth := Authorization{
		ID: demoAuthorizationID, Action: PublicClaimChange, Scope: []string{demoClaim},
		IssuedAt: DemoClock.Add(-time.Hour), ExpiresAt: DemoClock.Add(time.Hour), PayloadSHA256: payload,
	}
	signed, err := Sign(auth, key)
	if err != nil {
		return nil, err
	}
	other, err := Sign(auth, demoOtherKey())
	if err != nil {
		return nil, err
	}
	hd := auth
	hd.ID, hd.Action = "demo-0002", HardDelete
	hdSigned, err := Sign(hd, key)
	if err != nil {
		return nil, err
	}
	qa := auth
	qa.ID, qa.Action = "demo-0003", demoQuorumAction
	qSigned, err := Sign(qa, key)
	if err != nil {
		return nil, err
	}
	authCanon, err := Authorization{ID: auth.ID, Action: auth.Action, Scope: auth.Scope, IssuedAt: auth.IssuedAt,
		ExpiresAt: auth.ExpiresAt, KeyID: key.ID(), PayloadSHA256: payload}.Canonical()
	if err != nil {
		return nil, err
	}

	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	request := Request{Action: PublicClaimChange, Scope: []string{demoClaim}, PayloadSHA256: payload, Now: DemoClock}
	ask := func(pol *Policy, title string, req Request, full bool) Evaluation {
		p("\n%s\n", title)
		authNote := "none"
		switch {
		case bytes.Equal(req.Authorization, signed):
			authNote = "the signed artifact of section 2"
		case bytes.Equal(req.Authorization, other):
			authNote = "the same authorization, signed by the second demo key"
		case bytes.Equal(req.Authorization, hdSigned):
			authNote = "demo-0002, a valid authorization for HARD_DELETE"
		case bytes.Equal(req.Authorization, qSigned):
			authNote = "demo-0003, a valid authorization for " + demoQuorumAction
		case len(req.Authorization) > 0:
			authNote = "the signed artifact of section 2, altered as described"
		}
		p("request   action=%s scope=%s\n          payload_sha256=%s clock=%s\n          authorization=%s\n",
			req.Action, listOrNone(req.Scope), shortHash(req.PayloadSHA256), req.Now.Format(TimeFormat), authNote)
		ev := pol.Evaluate(req)
		if full {
			ev.WriteText(&b)
		} else {
			ev.WriteSummary(&b)
		}
		return ev
	}
	with := func(r Request, change func(*Request)) Request {
		r.Scope = append([]string(nil), r.Scope...)
		change(&r)
		return r
	}

	title := "PROOFSITE GATE DEMO TRANSCRIPT"
	p("%s\n%s\n\n", title, strings.Repeat("=", len(title)))
	p(`This transcript is produced by the real checkpoint (Go package ledger/gate):
"proofsite build" writes it to /products/gate/demo_output.txt and
"proofsite gate demo" prints the same bytes. It is never written by hand.
The key and the clock below are fixed and ed25519 signatures are
deterministic, so the same content always gives this exact transcript.

`)
	p("DEMO KEY   %s   (labelled demo key, NOT a Bridge key)\n", key.ID())
	p("  public key  %s\n", key.Public())
	p("  seed        SHA-256(%q)\n", DemoSeedText)
	p(`  The seed is published, so anyone can make this key's signatures. The demo
  key therefore authorizes nothing outside this demo: the checkpoint refuses
  to pin it, and case 3e shows this site's own checkpoint rejecting it.
`)
	p("BRIDGE KEYS pinned by this site (%s); the Bridge holds the private keys offline:\n", opts.Source)
	ids := site.Keys().String()
	if len(site.keys) == 0 {
		ids = "none pinned: BRIDGE_AUTH can never be satisfied"
	}
	p("  %s\n", ids)
	p("DEMO CLOCK %s\n", DemoClock.Format(TimeFormat))
	p("\nPOLICY (%s), which sections 1 to 3 run with the demo key pinned in place\nof the Bridge keys:\n", opts.Source)
	for _, r := range demo.rules {
		p("  %-22s requires %s\n", r.Action, controlList(r.Requires))
	}
	for _, a := range demo.denied {
		p("  %-22s denied unconditionally\n", a)
	}
	p("  %-22s denied by default (unknown action)\n", "anything else")
	p("\nDEMO PAYLOAD %s\n  sha256 %s\n", demoPayload, hex.EncodeToString(payload[:]))

	section(&b, "1. DENY BY DEFAULT")
	ask(demo, "1a. A claim change with no authorization", request, true)
	ask(demo, "1b. An action the policy does not name", with(request, func(r *Request) { r.Action = demoUnknownAction }), true)

	section(&b, "2. ALLOW WITH A BRIDGE AUTHORIZATION")
	p("\nThe authorization, signed with the demo key in place of the Bridge key\n(canonical JSON, the bytes the signature covers):\n  %s\n", authCanon)
	p("\nThe signed artifact, as \"proofsite gate sign\" prints it:\n%s\n", signed)
	allowed := ask(demo, "2a. The same claim change, with the signed artifact", with(request, func(r *Request) { r.Authorization = signed }), true)

	section(&b, "3. TAMPER REJECTION")
	p("\nEach case changes one thing and asks again. Every one is denied, with a\nspecific reason.\n")
	tampered := func(field string, value any) []byte {
		t, err := tamper(signed, field, value)
		if err != nil {
			panic(err) // the demo's own artifact always parses
		}
		return t
	}
	presented := with(request, func(r *Request) { r.Authorization = signed })
	ask(demo, "3a. Scope widened after signing: scope gains \"gate.bridge_keys\"",
		with(presented, func(r *Request) {
			r.Authorization = tampered("scope", []string{demoClaim, ClaimBridgeKeys})
			r.Scope = []string{demoClaim, ClaimBridgeKeys}
		}), false)
	ask(demo, "3b. Expiry extended after signing: expires_at becomes 2026-12-31T00:00:00Z",
		with(presented, func(r *Request) { r.Authorization = tampered("expires_at", "2026-12-31T00:00:00Z") }), false)
	ask(demo, "3c. Action changed after signing: PUBLIC_CLAIM_CHANGE becomes KEY_ROTATION",
		with(presented, func(r *Request) {
			r.Authorization = tampered("action", string(KeyRotation))
			r.Action = KeyRotation
		}), false)
	ask(demo, "3d. Signed by a key that is not pinned (the second demo key)",
		with(presented, func(r *Request) { r.Authorization = other }), false)
	ask(site, "3e. The demo authorization presented to this site's own checkpoint (Bridge keys pinned)",
		presented, false)
	ask(demo, "3f. Presented after it expired (clock at expires_at)",
		with(presented, func(r *Request) { r.Now = auth.ExpiresAt }), false)
	ask(demo, "3g. Presented before it was issued",
		with(presented, func(r *Request) { r.Now = auth.IssuedAt.Add(-time.Second) }), false)
	ask(demo, "3h. Used for another action (KEY_ROTATION)",
		with(presented, func(r *Request) { r.Action = KeyRotation }), false)
	ask(demo, "3i. Used for a claim it does not cover (gate.bridge_keys)",
		with(presented, func(r *Request) { r.Scope = []string{ClaimBridgeKeys} }), false)
	ask(demo, "3j. Used for another payload",
		with(presented, func(r *Request) {
			r.PayloadSHA256 = sha256.Sum256([]byte(`{"claim":"capability.bridge_auth","value":"roadmap"}`))
		}), false)
	ask(demo, "3k. HARD_DELETE, even with a valid authorization for it",
		with(presented, func(r *Request) { r.Action, r.Authorization = HardDelete, hdSigned }), false)

	section(&b, "4. THE CAPABILITY BOARD")
	p("\nControls, as the checkpoint evaluated them for the allowed request (2a):\n")
	for _, cs := range allowed.Board {
		p("  %-21s %-13s %s\n", cs.Control, cs.State, cs.Detail)
	}
	p("\nUNVERIFIABLE never counts as satisfied. A hypothetical action that requires\nNODE_APPROVAL_QUORUM (%s, not in the site's policy) is denied today\neven with a valid Bridge authorization:\n", demoQuorumAction)
	quorum, err := newPolicy(PolicyOptions{Actions: []ActionRule{{Action: demoQuorumAction, Requires: []Control{BridgeAuth, NodeApprovalQuorum}}},
		BridgeKeys: []ledger.PublicKey{key.Public()}})
	if err != nil {
		return nil, err
	}
	q := ask(quorum, "4a. "+demoQuorumAction+" with a valid authorization",
		with(presented, func(r *Request) { r.Action, r.Authorization = demoQuorumAction, qSigned }), false)
	p("satisfied  %s\nmissing    %s\n", controlList(q.Satisfied), controlList(q.Missing))

	p("\nThe published maturity board (%s; the same rows are in\n/.well-known/ai.json, /openapi.json and /products/gate/README.md):\n", opts.Source)
	for _, r := range opts.Board {
		p("  %-22s %s\n", r.Key, r.Value)
	}
	p("\nEND OF TRANSCRIPT\n")
	return b.Bytes(), nil
}

func section(b *bytes.Buffer, title string) {
	fmt.Fprintf(b, "\n\n%s\n%s\n", title, strings.Repeat("-", len(title)))
}

func shortHash(h ledger.Hash) string {
	if h.IsZero() {
		return "none"
	}
	return h.String()[:16] + "..."
}

// tamper returns the signed artifact with one member of its authorization
// replaced, the signature left as it was.
func tamper(signed []byte, field string, value any) ([]byte, error) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(signed, &env); err != nil {
		return nil, err
	}
	var auth map[string]any
	if err := json.Unmarshal(env["authorization"], &auth); err != nil {
		return nil, err
	}
	auth[field] = value
	a, err := ledger.MarshalCanonical(auth)
	if err != nil {
		return nil, err
	}
	env["authorization"] = a
	return ledger.MarshalCanonical(env)
}
