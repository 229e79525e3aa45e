package receipt

import (
	"bytes"
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
		if !nodeRe.MatchString(k.Node) {
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

// KeyRole is the role a node's receipt key is published with.
const KeyRole ledger.Role = "node"

// KeyRecord is the public record of a node's receipt key: what /api/nodes,
// ai.json and the data folder's node-keys.json publish, and what a
// verifier pins.
type KeyRecord struct {
	Node      string       `json:"node" doc:"Designation of the node whose receipts the key signs"`
	KeyID     ledger.KeyID `json:"key_id"`
	PublicKey string       `json:"public_key" doc:"32 bytes, lowercase hex"`
	Role      ledger.Role  `json:"role" enum:"node"`
}

// Publish returns the record of node's receipt key k.
func Publish(node string, k ledger.PublicKey) KeyRecord {
	return KeyRecord{Node: node, KeyID: k.ID(), PublicKey: k.String(), Role: KeyRole}
}

// KeysDocument is a published list of node keys: {"keys": [...]}.
type KeysDocument struct {
	Keys []KeyRecord `json:"keys"`
}

// ParseKeys reads a KeysDocument strictly (ledger.ValidateJSON's rules,
// exactly the documented members) and pins its keys: each must parse, have
// its derived id and the role node.
func ParseKeys(data []byte) (Keyring, []KeyRecord, error) {
	if err := ledger.ValidateJSON(data); err != nil {
		return Keyring{}, nil, fmt.Errorf("receipt: keys: %w", err)
	}
	var doc KeysDocument
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return Keyring{}, nil, fmt.Errorf("receipt: keys: %w", err)
	}
	pins := make([]NodeKey, len(doc.Keys))
	for i, r := range doc.Keys {
		k, err := ledger.ParsePublicKeyHex(r.PublicKey)
		switch {
		case err != nil:
			return Keyring{}, nil, fmt.Errorf("receipt: keys[%d]: %w", i, err)
		case k.ID() != r.KeyID:
			return Keyring{}, nil, fmt.Errorf("receipt: keys[%d]: key_id %s is not the id of the key (%s)", i, r.KeyID, k.ID())
		case r.Role != KeyRole:
			return Keyring{}, nil, fmt.Errorf("receipt: keys[%d]: role %q, want %q", i, r.Role, KeyRole)
		}
		pins[i] = NodeKey{Node: r.Node, Key: k}
	}
	ring, err := NewKeyring(pins...)
	return ring, doc.Keys, err
}
