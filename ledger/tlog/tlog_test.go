package tlog

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// mth is RFC 6962 §2.1 written from the definition, to check the library
// and the compact range against.
func mth(leaves [][]byte) Hash {
	switch len(leaves) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return sha256.Sum256(append([]byte{0}, leaves[0]...))
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	l, r := mth(leaves[:k]), mth(leaves[k:])
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

func TestTreeMatchesDefinition(t *testing.T) {
	var leaves [][]byte
	tree := NewTree()
	nodes := map[NodeID]Hash{}
	for n := range 70 {
		if got, want := tree.Root(), mth(leaves); got != want {
			t.Fatalf("size %d: root %s, want %s", n, got, want)
		}
		leaf := fmt.Appendf(nil, `{"index":%d}`, n)
		leaves = append(leaves, leaf)
		tree.Append(LeafHash(leaf), func(id NodeID, h Hash) { nodes[id] = h })
		// The border rebuilt from stored nodes is the same tree.
		var border []Hash
		for _, id := range BorderNodes(tree.Size()) {
			border = append(border, nodes[id])
		}
		again, err := TreeFrom(tree.Size(), border)
		if err != nil || again.Root() != tree.Root() {
			t.Fatalf("size %d: rebuilt %v %v", tree.Size(), again, err)
		}
	}
	var hashes []Hash
	for _, l := range leaves {
		hashes = append(hashes, LeafHash(l))
	}
	all, prefix := Roots(hashes, 0, 1, 17, 70, 99)
	if all != mth(leaves) || prefix[17] != mth(leaves[:17]) || prefix[0] != EmptyRoot() || prefix[1] != mth(leaves[:1]) || len(prefix) != 4 {
		t.Fatalf("Roots: %v %v", all, prefix)
	}

	read := func(id NodeID) (Hash, error) {
		h, ok := nodes[id]
		if !ok {
			return Hash{}, errors.New("missing")
		}
		return h, nil
	}
	for _, size := range []uint64{1, 2, 7, 64, 70} {
		root := mth(leaves[:size])
		for i := range size {
			p, err := InclusionProof(i, size, read)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyInclusion(hashes[i], i, size, p, root); err != nil {
				t.Fatalf("inclusion %d/%d: %v", i, size, err)
			}
			if err := VerifyInclusion(hashes[(i+1)%size], i, size, p, root); size > 1 && !errors.Is(err, ErrProof) {
				t.Fatalf("wrong leaf accepted at %d/%d", i, size)
			}
		}
		for size1 := range size + 1 {
			p, err := ConsistencyProof(size1, size, read)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyConsistency(size1, size, p, mth(leaves[:size1]), root); err != nil {
				t.Fatalf("consistency %d/%d: %v", size1, size, err)
			}
			if size1 > 0 && size1 < size {
				other := mth(append([][]byte{[]byte("forged")}, leaves[1:size1]...))
				if err := VerifyConsistency(size1, size, p, other, root); !errors.Is(err, ErrProof) {
					t.Fatalf("rewritten prefix accepted at %d/%d", size1, size)
				}
			}
		}
	}
}

func TestCheckpointNote(t *testing.T) {
	seed := sha256.Sum256([]byte("tlog test"))
	key := ed25519.NewKeyFromSeed(seed[:])
	const origin = "example.org/ledger"
	s, err := NewSigner(origin, key)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := VerifierKey(origin, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(vkey)
	if err != nil || v.KeyHash() != s.KeyHash() {
		t.Fatalf("verifier %v %v", v, err)
	}
	cp := Checkpoint{Origin: origin, Size: 20, Root: Hash{1, 2, 3}}
	signed, err := Sign(cp, s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(signed), origin+"\n20\nAQID") || !strings.Contains(string(signed), "\n\n\u2014 "+origin+" ") {
		t.Fatalf("note:\n%s", signed)
	}
	got, err := Open(signed, v)
	if err != nil || got != cp {
		t.Fatalf("Open: %+v %v", got, err)
	}
	text, isSigned := SplitNote(signed)
	if string(text) != string(cp.Body()) || !isSigned {
		t.Fatalf("SplitNote: %q %v", text, isSigned)
	}
	if b, err := ParseBody(cp.Body()); err != nil || b != cp {
		t.Fatalf("ParseBody: %+v %v", b, err)
	}

	other, _ := VerifierKey(origin, ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey))
	ov, _ := NewVerifier(other)
	wrongOrigin, _ := NewSigner("other.example/ledger", key)
	otherSigned, _ := Sign(Checkpoint{Origin: "other.example/ledger", Size: 20, Root: cp.Root}, wrongOrigin)
	for name, tc := range map[string]struct {
		note []byte
		v    Verifier
	}{
		"other key":          {signed, ov},
		"body edited":        {[]byte(strings.Replace(string(signed), "\n20\n", "\n21\n", 1)), v},
		"other origin":       {otherSigned, v},
		"unsigned body":      {cp.Body(), v},
		"extension line":     {mustSign(t, origin+"\n20\n"+strings.Split(string(cp.Body()), "\n")[2]+"\nextra\n", s), v},
		"leading zero size":  {mustSign(t, origin+"\n020\n"+strings.Split(string(cp.Body()), "\n")[2]+"\n", s), v},
		"short root":         {mustSign(t, origin+"\n20\nAQID\n", s), v},
		"not a note at all":  {[]byte("20:abcd"), v},
		"empty":              {nil, v},
		"signature mangled":  {[]byte(strings.Replace(string(signed), origin+" ", origin+" AAAA", 1)), v},
		"no blank separator": {[]byte(strings.Replace(string(signed), "\n\n", "\n", 1)), v},
	} {
		if _, err := Open(tc.note, tc.v); !errors.Is(err, ErrCheckpoint) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

func mustSign(t *testing.T, text string, s Signer) []byte {
	t.Helper()
	out, err := noteSign(text, s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
