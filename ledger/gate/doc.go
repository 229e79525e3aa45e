// Package gate is the authorization checkpoint: deny by default, Bridge
// signatures over canonical JSON, honest control states.
//
// A Policy maps action classes (PUBLIC_CLAIM_CHANGE, KEY_ROTATION, …) to the
// controls they require; actions it does not list are denied, and
// HARD_DELETE is denied unconditionally. Of the controls, BRIDGE_AUTH is
// live: it holds only for an Authorization signed by a pinned Bridge key
// that covers the request. NODE_APPROVAL_QUORUM and DISSENT_CHANNEL are
// roadmap controls and evaluate to UNVERIFIABLE, never to SATISFIED.
//
//	p, err := gate.NewPolicy(gate.PolicyOptions{Actions: rules, Denied: denied, BridgeKeys: keys})
//	ev := p.Evaluate(gate.Request{Action: gate.PublicClaimChange, Scope: scope,
//		PayloadSHA256: sum, Authorization: signed, Now: time.Now()})
//	if ev.Allowed() { … } else { log(ev.Err()) } // errors.Is(ev.Err(), gate.ErrTampered), …
//
// The Bridge signs offline (Sign, "proofsite gate sign"); the private key
// never reaches the server. Verify checks a signed artifact with the pinned
// keys before it reads any field, and then decodes only the exact canonical
// bytes the signature covers. Evaluate is pure: the clock and the keys are
// values, and it touches no store, file or network.
//
// Claims and Record serve the publish rule: a claims document (the
// capability board, the publish rule, this policy, hashes of claim files)
// is compared with the one recorded on the chain by the last publish, and a
// change needs a PUBLIC_CLAIM_CHANGE authorization whose scope is exactly
// the changed claims and whose payload_sha256 is the new document's hash.
//
// Demo produces the published transcript with the labelled demo key
// (DemoKey, derived from the published DemoSeedText) and a fixed clock.
//
// All values are immutable once built and safe for concurrent use.
package gate
