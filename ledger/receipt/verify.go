package receipt

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/proofsite/proofsite/ledger"
)

// NodeKey is a node's pinned public key.
type NodeKey struct {
	Node string
	Key  ledger.PublicKey
}

// Keyring is the set of pinned node keys a verifier trusts. The zero value
// trusts no key.
type Keyring struct {
	byID map[ledger.KeyID]NodeKey
}

// NewKeyring pins keys. Every key must be a usable public key (from
// ledger.ParsePublicKey) of a well-formed node designation, and no key may
// be pinned twice. A node may have several keys (rotation).
func NewKeyring(keys ...NodeKey) (Keyring, error) {
	kr := Keyring{byID: make(map[ledger.KeyID]NodeKey, len(keys))}
	for _, k := range keys {
		if k.Key.ID() == "" {
			return Keyring{}, fmt.Errorf("receipt: keyring: node %s: zero key", k.Node)
		}
		if !validNode(k.Node) {
			return Keyring{}, fmt.Errorf("receipt: keyring: %q is not a node designation", k.Node)
		}
		if _, dup := kr.byID[k.Key.ID()]; dup {
			return Keyring{}, fmt.Errorf("receipt: keyring: key %s pinned twice", k.Key.ID())
		}
		kr.byID[k.Key.ID()] = k
	}
	return kr, nil
}

// Evidence is what a verifier may hold besides the receipt: the JSON
// request and response bodies it should cover. Nil members are not
// checked.
type Evidence struct {
	Request  []byte
	Response []byte
}

// Verified is a receipt that passed every check, and the key that signed it.
type Verified struct {
	Receipt Receipt
	Key     ledger.PublicKey
}

// Verify checks a receipt (its JSON text) against the pinned keys and the
// evidence; see the package documentation for the order of the checks.
func Verify(data []byte, keys Keyring, ev Evidence) (Verified, error) {
	r, err := decode(data)
	if err != nil {
		return Verified{}, err
	}
	nk, ok := keys.byID[ledger.KeyID(r.KeyID)]
	if !ok {
		return Verified{}, fail("key_id", ErrUnknownKey, "%s is not a pinned node key", r.KeyID)
	}
	if nk.Node != r.Node {
		return Verified{}, fail("node", ErrWrongNode, "key %s is pinned for %s, the receipt names %s", r.KeyID, nk.Node, r.Node)
	}
	payload, err := r.Payload()
	if err != nil {
		return Verified{}, fail("", ErrMalformed, "%v", err)
	}
	raw, _ := hex.DecodeString(r.Signature) // form checked by decode
	var sig ledger.Signature
	copy(sig[:], raw)
	if !nk.Key.Verify(payload, sig) {
		return Verified{}, fail("signature", ErrSignature, "not a signature of %s over the receipt", r.KeyID)
	}
	// The signature verified: the members are what the node signed.
	if ev.Request != nil {
		h, err := HashJSON(ev.Request)
		if err != nil {
			return Verified{}, fail("request", ErrMalformed, "%v", err)
		}
		if h != r.RequestSHA256 {
			return Verified{}, fail("request_sha256", ErrRequestMismatch, "the supplied request hashes to %s", h)
		}
	}
	if ev.Response != nil {
		h, err := HashResponse(ev.Response)
		if err != nil {
			return Verified{}, fail("response", ErrMalformed, "%v", err)
		}
		if h != r.ResponseSHA256 {
			return Verified{}, fail("response_sha256", ErrResponseMismatch, "the supplied response hashes to %s", h)
		}
	}
	return Verified{Receipt: r, Key: nk.Key}, nil
}

// decode reads a receipt strictly: one JSON object (ledger.ValidateJSON's
// rules: valid UTF-8, no duplicate members), exactly the ten members with
// their exact names, each a string in its documented form.
func decode(data []byte) (Receipt, error) {
	if err := ledger.ValidateJSON(data); err != nil {
		return Receipt{}, fail("", ErrMalformed, "%v", err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return Receipt{}, fail("", ErrMalformed, "not a JSON object")
	}
	values := make(map[string]string, len(Members))
	for _, name := range Members {
		raw, ok := obj[name]
		if !ok {
			return Receipt{}, fail(name, ErrMalformed, "missing")
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || raw[0] != '"' {
			return Receipt{}, fail(name, ErrMalformed, "not a string")
		}
		values[name] = s
	}
	if len(obj) != len(Members) {
		for name := range obj {
			if _, ok := values[name]; !ok {
				return Receipt{}, fail(name, ErrMalformed, "unknown member")
			}
		}
	}
	r := Receipt{
		ReceiptID: values["receipt_id"], Route: values["route"], Node: values["node"], Provider: values["provider"],
		Model: values["model"], RequestSHA256: values["request_sha256"], ResponseSHA256: values["response_sha256"],
		IssuedAt: values["issued_at"], KeyID: values["key_id"], Signature: values["signature"],
	}
	if err := r.check(); err != nil {
		return Receipt{}, err
	}
	return r, nil
}

// KeyringOf pins the node keys (role node) among published keys, each for
// the node it names: a trust document's keys, or /api/nodes receipt_keys.
// Keys of other roles are left out; a node key must parse, carry its
// derived id and name a node.
func KeyringOf(published []ledger.PublishedKey) (Keyring, error) {
	var pins []NodeKey
	for _, p := range published {
		if p.Role != ledger.RoleNode {
			continue
		}
		k, err := ledger.ParsePublicKeyHex(p.PublicKey)
		switch {
		case err != nil:
			return Keyring{}, fmt.Errorf("receipt: key %s: %w", p.KeyID, err)
		case k.ID() != p.KeyID:
			return Keyring{}, fmt.Errorf("receipt: key_id %s is not the id of the key (%s)", p.KeyID, k.ID())
		}
		pins = append(pins, NodeKey{Node: p.Node, Key: k})
	}
	return NewKeyring(pins...)
}
