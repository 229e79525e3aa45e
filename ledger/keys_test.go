package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// seededKey returns a deterministic key for tests and vectors.
func seededKey(t testing.TB, name string) PrivateKey {
	t.Helper()
	seed := sha256.Sum256([]byte("proofsite test key: " + name))
	k, err := NewPrivateKeyFromSeed(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testSigners is the writer and two witnesses used by the tests and vectors.
func testSigners(t testing.TB) Signers {
	return Signers{
		Writer:    seededKey(t, "writer"),
		Witnesses: []PrivateKey{seededKey(t, "witness-1"), seededKey(t, "witness-2")},
	}
}

func TestParsePublicKeyRejects(t *testing.T) {
	tests := []struct {
		desc string
		hex  string
		want error
	}{
		{"empty", "", ErrInvalidKey},
		{"31 bytes", strings.Repeat("ab", 31), ErrInvalidKey},
		{"33 bytes", strings.Repeat("ab", 33), ErrInvalidKey},
		{"identity (order 1)", "0100000000000000000000000000000000000000000000000000000000000000", ErrSmallOrderKey},
		{"identity, x sign bit set", "0100000000000000000000000000000000000000000000000000000000000080", ErrSmallOrderKey},
		{"y = 0 (order 4)", "0000000000000000000000000000000000000000000000000000000000000000", ErrSmallOrderKey},
		{"y = -1 (order 2)", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", ErrSmallOrderKey},
		{"order 8", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", ErrSmallOrderKey},
		{"order 8, other", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", ErrSmallOrderKey},
		{"order 8, x sign flipped", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", ErrSmallOrderKey},
		{"non-canonical y = p (= 0)", "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", ErrSmallOrderKey},
		{"non-canonical y = p+1 (= 1)", "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", ErrSmallOrderKey},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			if _, err := ParsePublicKeyHex(tc.hex); !errors.Is(err, tc.want) {
				t.Fatalf("ParsePublicKeyHex(%s) error = %v, want %v", tc.hex, err, tc.want)
			}
		})
	}
}

func TestParsePublicKeyAcceptsRealKeys(t *testing.T) {
	for i := range 200 {
		k := seededKey(t, "k"+string(rune('a'+i%26))+strings.Repeat("x", i))
		pub, err := ParsePublicKey(k.Public().Bytes())
		if err != nil {
			t.Fatalf("real key %s rejected: %v", k.Public(), err)
		}
		if pub.ID() != k.ID() {
			t.Fatalf("id %s != %s", pub.ID(), k.ID())
		}
	}
	// The RFC 8032 test 1 key.
	raw, _ := hex.DecodeString("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
	if _, err := ParsePublicKey(raw); err != nil {
		t.Fatalf("RFC 8032 key rejected: %v", err)
	}
}

func TestKeyIDDerived(t *testing.T) {
	k := seededKey(t, "writer")
	sum := sha256.Sum256(k.Public().Bytes())
	want := KeyID("ed25519:" + hex.EncodeToString(sum[:16]))
	if k.ID() != want {
		t.Fatalf("ID = %s, want %s", k.ID(), want)
	}
	msg := []byte("hello")
	if !k.Public().Verify(msg, k.Sign(msg)) {
		t.Fatal("own signature does not verify")
	}
	if (PublicKey{}).Verify(msg, k.Sign(msg)) {
		t.Fatal("zero key verified")
	}
}

func TestNewKeySet(t *testing.T) {
	s := testSigners(t)
	good := s.KeySet().Published()
	if len(good) != 3 || good[0].Role != RoleWriter {
		t.Fatalf("Published = %+v", good)
	}
	if _, err := NewKeySet(good); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc   string
		mutate func([]PublishedKey)
		want   error
	}{
		{"free-text id", func(p []PublishedKey) { p[0].KeyID = "bridge-writer" }, ErrKeyIDMismatch},
		{"short key", func(p []PublishedKey) { p[1].PublicKey = p[1].PublicKey[:60] }, ErrInvalidKey},
		{"small order", func(p []PublishedKey) {
			p[1].PublicKey = "0100000000000000000000000000000000000000000000000000000000000000"
			p[1].KeyID = DeriveKeyID(ed25519.PublicKey(mustHex(p[1].PublicKey)))
		}, ErrSmallOrderKey},
		{"unknown role", func(p []PublishedKey) { p[2].Role = "admin" }, ErrInvalidKey},
		{"duplicate", func(p []PublishedKey) { p[2] = p[1] }, ErrInvalidKey},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			p := append([]PublishedKey(nil), good...)
			tc.mutate(p)
			if _, err := NewKeySet(p); !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
		})
	}
	ks := s.KeySet()
	if _, err := ks.Lookup(s.Witnesses[0].ID(), RoleWriter); !errors.Is(err, ErrKeyRole) {
		t.Fatalf("witness as writer: %v", err)
	}
	if _, err := ks.Lookup("ed25519:nope", RoleWriter); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown: %v", err)
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestSignIsStdlibSign holds PrivateKey.Sign (curve25519-voi) to
// crypto/ed25519.Sign, byte for byte, over random keys and messages of
// lengths around SHA-512's block boundaries, and checks each signature
// with crypto/ed25519.Verify.
func TestSignIsStdlibSign(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	lengths := []int{0, 1, 63, 64, 111, 112, 127, 128, 129, 255, 256, 1000, 4096}
	for i := range 300 {
		var seed [ed25519.SeedSize]byte
		for j := range seed {
			seed[j] = byte(rnd.Uint32())
		}
		msg := make([]byte, lengths[i%len(lengths)]+rnd.IntN(3))
		for j := range msg {
			msg[j] = byte(rnd.Uint32())
		}
		signsAsStdlib(t, seed[:], msg)
	}
}

// FuzzSign: for any seed and message, PrivateKey.Sign is
// crypto/ed25519.Sign.
func FuzzSign(f *testing.F) {
	f.Add(make([]byte, ed25519.SeedSize), []byte{})
	f.Add([]byte("a seed of exactly thirty-two by."), []byte(`{"route":"/api/chat"}`))
	f.Fuzz(func(t *testing.T, seed, msg []byte) {
		if len(seed) != ed25519.SeedSize {
			return
		}
		signsAsStdlib(t, seed, msg)
	})
}

// signsAsStdlib fails t unless the key of seed signs msg as crypto/ed25519
// does, with a signature crypto/ed25519 verifies.
func signsAsStdlib(t *testing.T, seed, msg []byte) {
	t.Helper()
	k, err := NewPrivateKeyFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	want := ed25519.Sign(ed25519.NewKeyFromSeed(seed), msg)
	got := k.Sign(msg)
	if !bytes.Equal(got[:], want) {
		t.Fatalf("seed %x, message %x: signature %x, crypto/ed25519 signs %x", seed, msg, got, want)
	}
	if !ed25519.Verify(k.Public().Bytes(), msg, got[:]) {
		t.Fatalf("seed %x, message %x: crypto/ed25519 does not verify the signature", seed, msg)
	}
}

// BenchmarkSign compares PrivateKey.Sign with crypto/ed25519.Sign on a
// receipt-sized message (run with -count to interleave them).
func BenchmarkSign(b *testing.B) {
	k := seededKey(b, "writer")
	std := k.Ed25519()
	msg := bytes.Repeat([]byte("x"), 400)
	b.Run("impl=stdlib", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ed25519.Sign(std, msg)
		}
	})
	b.Run("impl=ledger", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			k.Sign(msg)
		}
	})
}
