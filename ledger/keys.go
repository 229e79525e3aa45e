package ledger

import (
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"

	voied "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// KeyID names a public key. It is derived from the key, never chosen:
// "ed25519:" followed by the first 16 bytes of SHA-256(public key) in
// lowercase hex.
type KeyID string

// keyIDPrefix starts every KeyID.
const keyIDPrefix = "ed25519:"

// DeriveKeyID returns the KeyID of a 32-byte ed25519 public key.
func DeriveKeyID(pub ed25519.PublicKey) KeyID {
	sum := sha256.Sum256(pub)
	return KeyID(keyIDPrefix + hex.EncodeToString(sum[:16]))
}

// PublicKey is an ed25519 public key that passed the checks of
// ParsePublicKey: right length, not of small order. The zero value is not
// usable.
type PublicKey struct {
	id  KeyID
	key ed25519.PublicKey
}

// ParsePublicKey validates a raw 32-byte ed25519 public key. It rejects a
// wrong length (ErrInvalidKey) and keys of small order (ErrSmallOrderKey),
// so that verification never panics and never accepts a forgery made under a
// weak key (ARCHITECTURE §7: check when loading, not when verifying).
func ParsePublicKey(raw []byte) (PublicKey, error) {
	if len(raw) != ed25519.PublicKeySize {
		return PublicKey{}, fmt.Errorf("%w: public key is %d bytes, want %d", ErrInvalidKey, len(raw), ed25519.PublicKeySize)
	}
	if smallOrder(raw) {
		return PublicKey{}, ErrSmallOrderKey
	}
	key := ed25519.PublicKey(slices.Clone(raw))
	return PublicKey{id: DeriveKeyID(key), key: key}, nil
}

// ParsePublicKeyHex is ParsePublicKey for a lowercase or uppercase hex string.
func ParsePublicKeyHex(s string) (PublicKey, error) {
	raw, err := hex.DecodeString(s)
	if err != nil {
		return PublicKey{}, fmt.Errorf("%w: %v", ErrInvalidKey, err)
	}
	return ParsePublicKey(raw)
}

// ID returns the key's derived id.
func (k PublicKey) ID() KeyID { return k.id }

// Bytes returns a copy of the raw 32-byte key.
func (k PublicKey) Bytes() []byte { return slices.Clone(k.key) }

// String returns the key in lowercase hex.
func (k PublicKey) String() string { return hex.EncodeToString(k.key) }

// Verify reports whether sig is k's signature over msg. A zero PublicKey
// verifies nothing.
func (k PublicKey) Verify(msg []byte, sig Signature) bool {
	if len(k.key) != ed25519.PublicKeySize {
		return false
	}
	return ed25519.Verify(k.key, msg, sig[:])
}

// PrivateKey signs blocks. It holds an ed25519 private key and its public
// half.
type PrivateKey struct {
	pub  PublicKey
	priv ed25519.PrivateKey
}

// GenerateKey makes a new key from rand (crypto/rand.Reader when nil).
func GenerateKey(rand io.Reader) (PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return PrivateKey{}, fmt.Errorf("ledger: generate key: %w", err)
	}
	return NewPrivateKey(priv)
}

// NewPrivateKeyFromSeed returns the key with the given 32-byte RFC 8032 seed.
func NewPrivateKeyFromSeed(seed []byte) (PrivateKey, error) {
	if len(seed) != ed25519.SeedSize {
		return PrivateKey{}, fmt.Errorf("%w: seed is %d bytes, want %d", ErrInvalidKey, len(seed), ed25519.SeedSize)
	}
	return NewPrivateKey(ed25519.NewKeyFromSeed(seed))
}

// NewPrivateKey wraps an ed25519 private key after checking it.
func NewPrivateKey(priv ed25519.PrivateKey) (PrivateKey, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return PrivateKey{}, fmt.Errorf("%w: private key is %d bytes, want %d", ErrInvalidKey, len(priv), ed25519.PrivateKeySize)
	}
	// Recompute the public half from the seed rather than trusting the
	// copy stored in the second half of priv.
	priv = ed25519.NewKeyFromSeed(priv.Seed())
	pub, err := ParsePublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return PrivateKey{}, err
	}
	return PrivateKey{pub: pub, priv: priv}, nil
}

// Public returns the public half.
func (k PrivateKey) Public() PublicKey { return k.pub }

// ID returns the id of the public half.
func (k PrivateKey) ID() KeyID { return k.pub.id }

// Ed25519 returns a copy of the underlying key, for storing it.
func (k PrivateKey) Ed25519() ed25519.PrivateKey { return slices.Clone(k.priv) }

// Sign signs msg. ed25519 signing is deterministic (RFC 8032 §5.1.6), so
// the signature is crypto/ed25519's, byte for byte; it is made with
// curve25519-voi, which signs in about half the time on amd64 (a receipt
// is signed on every AI answer). TestSignIsStdlibSign and FuzzSign hold the
// two to the same bytes; verifying stays crypto/ed25519's (Verify).
func (k PrivateKey) Sign(msg []byte) Signature {
	var sig Signature
	copy(sig[:], voied.Sign(voied.PrivateKey(k.priv), msg))
	return sig
}

// Role is what a pinned key may sign.
type Role string

// The roles a key can be published with.
// Only writer and witness keys sign blocks; a bridge or node key pinned
// beside them is never accepted in either role (KeySet.Lookup checks the
// role).
const (
	RoleWriter  Role = "writer"  // signs blocks as their author (and the log's checkpoints)
	RoleWitness Role = "witness" // co-signs blocks
	RoleBridge  Role = "bridge"  // signs gate authorizations (the human authority boundary)
	RoleNode    Role = "node"    // signs an AI node's receipts
)

// knownRole reports whether r is one of the roles above.
func knownRole(r Role) bool {
	return r == RoleWriter || r == RoleWitness || r == RoleBridge || r == RoleNode
}

// PublishedKey is the public record of a key: what keys.json, the export
// header and the chain status publish, and what verifiers pin.
type PublishedKey struct {
	KeyID     KeyID  `json:"key_id"`
	PublicKey string `json:"public_key"` // 32 bytes, lowercase hex
	Role      Role   `json:"role"`
	// Node is the designation of the AI node whose receipts a node key
	// signs (S2_CASE); present on role node keys only.
	Node string `json:"node,omitempty" doc:"Designation of the node whose receipts the key signs (role node only)"`
}

// PublishNode returns the published record of node's receipt key k.
func PublishNode(k PublicKey, node string) PublishedKey {
	p := Publish(k, RoleNode)
	p.Node = node
	return p
}

// Publish returns the published record of k in role r.
func Publish(k PublicKey, r Role) PublishedKey {
	return PublishedKey{KeyID: k.id, PublicKey: k.String(), Role: r}
}

// KeySet is a set of pinned public keys with their roles. The zero value is
// empty: every signature is by an unknown key.
type KeySet struct {
	keys map[KeyID]pinnedKey
}

type pinnedKey struct {
	key  PublicKey
	role Role
	node string // role node: the AI node it signs for
}

// NewKeySet parses and checks published keys: every public key must parse
// (length, small order), its id must be the derived id, its role must be
// known, and no id may appear twice.
func NewKeySet(published []PublishedKey) (KeySet, error) {
	ks := KeySet{keys: make(map[KeyID]pinnedKey, len(published))}
	for _, p := range published {
		k, err := ParsePublicKeyHex(p.PublicKey)
		if err != nil {
			return KeySet{}, fmt.Errorf("key %s: %w", p.KeyID, err)
		}
		if k.ID() != p.KeyID {
			return KeySet{}, fmt.Errorf("%w: published %s, derived %s", ErrKeyIDMismatch, p.KeyID, k.ID())
		}
		if !knownRole(p.Role) {
			return KeySet{}, fmt.Errorf("%w: key %s has unknown role %q", ErrInvalidKey, p.KeyID, p.Role)
		}
		if (p.Role == RoleNode) != (p.Node != "") {
			return KeySet{}, fmt.Errorf("%w: key %s: a node key, and only a node key, names its node (role %s, node %q)", ErrInvalidKey, p.KeyID, p.Role, p.Node)
		}
		if _, dup := ks.keys[p.KeyID]; dup {
			return KeySet{}, fmt.Errorf("%w: key %s listed twice", ErrInvalidKey, p.KeyID)
		}
		ks.keys[p.KeyID] = pinnedKey{key: k, role: p.Role, node: p.Node}
	}
	return ks, nil
}

// Lookup returns the pinned key with the given id and role. It fails with
// ErrUnknownKey or ErrKeyRole.
func (ks KeySet) Lookup(id KeyID, role Role) (PublicKey, error) {
	p, ok := ks.keys[id]
	if !ok {
		return PublicKey{}, fmt.Errorf("%w: %s", ErrUnknownKey, id)
	}
	if p.role != role {
		return PublicKey{}, fmt.Errorf("%w: %s is a %s key, used as %s", ErrKeyRole, id, p.role, role)
	}
	return p.key, nil
}

// Len returns the number of pinned keys.
func (ks KeySet) Len() int { return len(ks.keys) }

// Count returns the number of pinned keys in role r.
func (ks KeySet) Count(r Role) int {
	n := 0
	for _, p := range ks.keys {
		if p.role == r {
			n++
		}
	}
	return n
}

// Published returns the set as published records, sorted by role (writer,
// witness, bridge, node), then by id.
func (ks KeySet) Published() []PublishedKey {
	out := make([]PublishedKey, 0, len(ks.keys))
	for _, p := range ks.keys {
		rec := Publish(p.key, p.role)
		rec.Node = p.node
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b PublishedKey) int {
		if a.Role != b.Role {
			return roleOrder(a.Role) - roleOrder(b.Role)
		}
		return strings.Compare(string(a.KeyID), string(b.KeyID))
	})
	return out
}

func roleOrder(r Role) int {
	return slices.Index([]Role{RoleWriter, RoleWitness, RoleBridge, RoleNode}, r)
}

// Signers are the private keys that seal blocks: one writer and any number
// of witnesses.
type Signers struct {
	Writer    PrivateKey
	Witnesses []PrivateKey
}

// KeySet returns the public keys of s, pinned in their roles.
func (s Signers) KeySet() KeySet {
	ks := KeySet{keys: map[KeyID]pinnedKey{s.Writer.ID(): {key: s.Writer.Public(), role: RoleWriter}}}
	for _, w := range s.Witnesses {
		ks.keys[w.ID()] = pinnedKey{key: w.Public(), role: RoleWitness}
	}
	return ks
}

// fieldP is 2^255 − 19, the prime of Curve25519's field.
var fieldP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))

// lowOrderProbe is a fixed X25519 scalar used only to detect low-order
// points; its value does not matter.
var lowOrderProbe, _ = ecdh.X25519().NewPrivateKey(make([]byte, 32))

// smallOrder reports whether the ed25519 public key encoding names a point
// of small order (order 1, 2, 4 or 8), including non-canonical encodings of
// those points. It maps the Edwards y coordinate to the birationally
// equivalent Montgomery u = (1+y)/(1−y), which preserves the order of the
// point, and asks X25519 (which refuses low-order inputs) about u.
func smallOrder(pub []byte) bool {
	le := slices.Clone(pub)
	le[31] &= 0x7f // the top bit is the sign of x, not part of y
	slices.Reverse(le)
	y := new(big.Int).SetBytes(le)
	y.Mod(y, fieldP)
	den := new(big.Int).Sub(big.NewInt(1), y)
	den.Mod(den, fieldP)
	if den.Sign() == 0 {
		return true // y = 1: the identity point
	}
	u := new(big.Int).Add(big.NewInt(1), y)
	u.Mul(u, new(big.Int).ModInverse(den, fieldP))
	u.Mod(u, fieldP)
	ub := u.FillBytes(make([]byte, 32))
	slices.Reverse(ub)
	remote, err := ecdh.X25519().NewPublicKey(ub)
	if err != nil {
		return true
	}
	_, err = lowOrderProbe.ECDH(remote) // fails exactly when the result is the all-zero point
	return err != nil
}

// KeysDocument is the legacy published keys file, {"keys":[…]}, that
// instances wrote before the trust document (TrustDocument); ParseTrustDocument
// still accepts it.
//
//	{"keys":[{"key_id":"ed25519:…","public_key":"…","role":"writer"}, …]}
type KeysDocument struct {
	Keys []PublishedKey `json:"keys"`
}
