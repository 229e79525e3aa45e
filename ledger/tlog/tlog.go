// Package tlog is the transparency-log layer of the ledger: an RFC 6962
// Merkle tree over leaf bytes (the canonical public rows; package ledger
// says what a leaf is), its checkpoints as C2SP tlog-checkpoint signed
// notes, and inclusion and consistency proofs. It knows nothing of blocks.
//
//	t := tlog.NewTree()
//	t.Append(tlog.LeafHash(leaf), nil)             // O(log n); the visitor sees every new node
//	cp := tlog.Checkpoint{Origin: "example.org/ledger", Size: t.Size(), Root: t.Root()}
//	signer, _ := tlog.NewSigner(cp.Origin, key)    // ed25519, note key name = origin
//	signed, _ := tlog.Sign(cp, signer)             // the C2SP signed note
//	cp, err := tlog.Open(signed, verifier)         // signature first, then the body
//
// The maths comes from github.com/transparency-dev/merkle (rfc6962 hashing,
// compact ranges, proof node sets and proof verification) and the note from
// golang.org/x/mod/sumdb/note with the checkpoint body of
// github.com/transparency-dev/formats/log. A Tree is not safe for concurrent
// use; everything else is.
package tlog

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"golang.org/x/mod/sumdb/note"
)

// Errors of the package, for errors.Is.
var (
	// ErrCheckpoint reports a checkpoint that cannot be parsed or whose
	// signature does not verify with the pinned key.
	ErrCheckpoint = errors.New("tlog: invalid checkpoint")
	// ErrProof reports a proof that does not verify or cannot be built.
	ErrProof = errors.New("tlog: invalid proof")
)

// Hash is a SHA-256 tree hash (a leaf hash, a node hash or a root).
type Hash [32]byte

// String returns the hash in lowercase hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

var hasher = rfc6962.DefaultHasher

// LeafHash is the RFC 6962 leaf hash: SHA-256(0x00 || leaf).
func LeafHash(leaf []byte) Hash { return Hash(hasher.HashLeaf(leaf)) }

// EmptyRoot is the root of the tree with no leaves: SHA-256 of nothing.
func EmptyRoot() Hash { return Hash(sha256.Sum256(nil)) }

var factory = &compact.RangeFactory{Hash: hasher.HashChildren}

// NodeID names a node of the tree: its level (0 for leaves) and its index
// among the nodes of that level.
type NodeID = compact.NodeID

// Tree is the right border of a Merkle tree (a compact range from leaf 0):
// O(log n) hashes, enough to append and to compute the root. The nodes
// themselves are the caller's to keep (the visitor of Append reports each).
type Tree struct{ r *compact.Range }

// NewTree returns an empty tree.
func NewTree() *Tree { return &Tree{r: factory.NewEmptyRange(0)} }

// BorderNodes returns the nodes whose hashes make up the border of a tree
// of size leaves, left to right: the roots of the perfect subtrees that
// cover [0, size).
func BorderNodes(size uint64) []NodeID { return compact.RangeNodes(0, size, nil) }

// TreeFrom rebuilds a tree of size leaves from the hashes of
// BorderNodes(size), in that order.
func TreeFrom(size uint64, border []Hash) (*Tree, error) {
	hashes := make([][]byte, len(border))
	for i := range border {
		hashes[i] = border[i][:]
	}
	r, err := factory.NewRange(0, size, hashes)
	if err != nil {
		return nil, fmt.Errorf("tlog: tree of size %d: %w", size, err)
	}
	return &Tree{r: r}, nil
}

// Size returns the number of leaves.
func (t *Tree) Size() uint64 { return t.r.End() }

// Append adds a leaf hash. visit, when set, is called for the leaf and for
// every internal node the append completes.
func (t *Tree) Append(leaf Hash, visit func(id NodeID, h Hash)) {
	var fn compact.VisitFn
	if visit != nil {
		fn = func(id NodeID, h []byte) { visit(id, Hash(h)) }
	}
	// Append fails only for ranges that do not start at 0; ours do.
	if err := t.r.Append(leaf[:], fn); err != nil {
		panic(err)
	}
}

// Root returns the tree's root hash (EmptyRoot for no leaves).
func (t *Tree) Root() Hash {
	root, err := t.r.GetRootHash(nil)
	if err != nil || root == nil {
		return EmptyRoot()
	}
	return Hash(root)
}

// Clone returns an independent copy of t.
func (t *Tree) Clone() *Tree {
	hashes := make([][]byte, len(t.r.Hashes()))
	for i, h := range t.r.Hashes() {
		hashes[i] = bytes.Clone(h)
	}
	r, _ := factory.NewRange(0, t.r.End(), hashes)
	return &Tree{r: r}
}

// Roots computes, in one pass over leaf hashes, the root of the tree of all
// of them and the root at each size listed in at (sizes beyond the leaves
// are left out of the result).
func Roots(leaves []Hash, at ...uint64) (all Hash, prefix map[uint64]Hash) {
	t := NewTree()
	prefix = make(map[uint64]Hash, len(at))
	want := make(map[uint64]bool, len(at))
	for _, n := range at {
		want[n] = true
	}
	if want[0] {
		prefix[0] = EmptyRoot()
	}
	for _, l := range leaves {
		t.Append(l, nil)
		if want[t.Size()] {
			prefix[t.Size()] = t.Root()
		}
	}
	return t.Root(), prefix
}

// Proof is a list of node hashes, from the leaf's (or the smaller tree's)
// level up.
type Proof []Hash

// NodeReader returns the stored hash of a node of the tree.
type NodeReader func(id NodeID) (Hash, error)

// InclusionProof builds the proof that leaf index is in the tree of size
// leaves, reading the nodes it needs.
func InclusionProof(index, size uint64, read NodeReader) (Proof, error) {
	nodes, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProof, err)
	}
	return rehash(nodes, read)
}

// ConsistencyProof builds the proof that the tree of size1 leaves is a
// prefix of the tree of size2 leaves.
func ConsistencyProof(size1, size2 uint64, read NodeReader) (Proof, error) {
	nodes, err := proof.Consistency(size1, size2)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProof, err)
	}
	return rehash(nodes, read)
}

func rehash(nodes proof.Nodes, read NodeReader) (Proof, error) {
	hashes := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		h, err := read(id)
		if err != nil {
			return nil, fmt.Errorf("tlog: node %d/%d: %w", id.Level, id.Index, err)
		}
		hashes[i] = h[:]
	}
	hashes, err := nodes.Rehash(hashes, hasher.HashChildren)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrProof, err)
	}
	out := make(Proof, len(hashes))
	for i, h := range hashes {
		out[i] = Hash(h)
	}
	return out, nil
}

func (p Proof) raw() [][]byte {
	out := make([][]byte, len(p))
	for i := range p {
		out[i] = p[i][:]
	}
	return out
}

// VerifyInclusion checks that leaf is at index in the tree of size leaves
// with the given root.
func VerifyInclusion(leaf Hash, index, size uint64, p Proof, root Hash) error {
	if err := proof.VerifyInclusion(hasher, index, size, leaf[:], p.raw(), root[:]); err != nil {
		return fmt.Errorf("%w: inclusion of leaf %d in tree of size %d: %w", ErrProof, index, size, err)
	}
	return nil
}

// VerifyConsistency checks that the tree of size1 leaves with root1 is a
// prefix of the tree of size2 leaves with root2.
func VerifyConsistency(size1, size2 uint64, p Proof, root1, root2 Hash) error {
	if err := proof.VerifyConsistency(hasher, size1, size2, p.raw(), root1[:], root2[:]); err != nil {
		return fmt.Errorf("%w: consistency of size %d with size %d: %w", ErrProof, size1, size2, err)
	}
	return nil
}

// Checkpoint is the C2SP tlog-checkpoint body: the log's origin, its size
// and its root hash. Its text form (Body) is exactly
//
//	<origin>\n<size in decimal>\n<root in standard base64>\n
//
// and its signed form is that text as a signed note.
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   Hash
}

// Body returns the checkpoint's text.
func (c Checkpoint) Body() []byte {
	return log.Checkpoint{Origin: c.Origin, Size: c.Size, Hash: c.Root[:]}.Marshal()
}

// ParseBody parses a checkpoint's text strictly: exactly three lines, a
// non-empty origin, a size in canonical decimal and a 32-byte root in
// standard base64. Extension lines are refused.
func ParseBody(body []byte) (Checkpoint, error) {
	var lc log.Checkpoint
	rest, err := lc.Unmarshal(body)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if len(rest) > 0 {
		return Checkpoint{}, fmt.Errorf("%w: extension lines are not supported", ErrCheckpoint)
	}
	if len(lc.Hash) != sha256.Size {
		return Checkpoint{}, fmt.Errorf("%w: root is %d bytes, want %d", ErrCheckpoint, len(lc.Hash), sha256.Size)
	}
	c := Checkpoint{Origin: lc.Origin, Size: lc.Size, Root: Hash(lc.Hash)}
	if !bytes.Equal(c.Body(), body) {
		return Checkpoint{}, fmt.Errorf("%w: not in canonical form (size or root spelled differently)", ErrCheckpoint)
	}
	return c, nil
}

// Signer is a note signer.
type Signer = note.Signer

// Verifier is a note verifier.
type Verifier = note.Verifier

// VerifierKey returns the note verifier key of an ed25519 public key under
// the key name origin: "<origin>+<key hash>+<base64 of 0x01 || key>", the
// string an auditor pins.
func VerifierKey(origin string, pub ed25519.PublicKey) (string, error) {
	vkey, err := note.NewEd25519VerifierKey(origin, pub)
	if err != nil {
		return "", fmt.Errorf("tlog: verifier key for %q: %w", origin, err)
	}
	return vkey, nil
}

// NewVerifier parses a note verifier key (the form VerifierKey returns).
func NewVerifier(vkey string) (Verifier, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("%w: checkpoint key %q: %w", ErrCheckpoint, vkey, err)
	}
	return v, nil
}

// NewSigner returns the note signer of an ed25519 private key under the key
// name origin.
func NewSigner(origin string, key ed25519.PrivateKey) (Signer, error) {
	vkey, err := VerifierKey(origin, key.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	// vkey is "<name>+<hash>+<key>" (the key's base64 may hold '+'); the
	// signer key reuses the name and the hash.
	hash, _, _ := strings.Cut(strings.TrimPrefix(vkey, origin+"+"), "+")
	skey := "PRIVATE+KEY+" + origin + "+" + hash + "+" + base64.StdEncoding.EncodeToString(append([]byte{1}, key.Seed()...))
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("tlog: signer for %q: %w", origin, err)
	}
	return s, nil
}

// Sign returns c as a signed note. The signer's name must be the origin.
func Sign(c Checkpoint, s Signer) ([]byte, error) {
	if s.Name() != c.Origin {
		return nil, fmt.Errorf("%w: signer %q for origin %q", ErrCheckpoint, s.Name(), c.Origin)
	}
	out, err := note.Sign(&note.Note{Text: string(c.Body())}, s)
	if err != nil {
		return nil, fmt.Errorf("tlog: sign checkpoint: %w", err)
	}
	return out, nil
}

// Open verifies a signed checkpoint with v (whose name is the log's origin)
// and only then parses its body. Signatures by other keys are ignored; the
// one by v must be there and valid.
func Open(signed []byte, v Verifier) (Checkpoint, error) {
	// Check the signature first, then trust the fields.
	_, _, n, err := log.ParseCheckpoint(signed, v.Name(), v)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return ParseBody([]byte(n.Text))
}

// SplitNote returns the text of a note (everything before the blank line
// that starts its signatures) without verifying anything, and whether
// signature lines follow. A bare checkpoint body is its own text.
func SplitNote(data []byte) (text []byte, signed bool) {
	if i := bytes.Index(data, []byte("\n\n")); i >= 0 {
		return data[:i+1], len(bytes.TrimSpace(data[i+2:])) > 0
	}
	return data, false
}
