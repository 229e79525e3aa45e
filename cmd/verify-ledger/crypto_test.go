package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/tlog"
)

// RFC 8785 Appendix B: IEEE 754 doubles and their ECMAScript form.
func TestNumbersRFC8785AppendixB(t *testing.T) {
	for bitsHex, want := range map[string]string{
		"0000000000000000": "0", "8000000000000000": "0", "0000000000000001": "5e-324", "8000000000000001": "-5e-324",
		"7fefffffffffffff": "1.7976931348623157e+308", "ffefffffffffffff": "-1.7976931348623157e+308",
		"4340000000000000": "9007199254740992", "c340000000000000": "-9007199254740992", "4430000000000000": "295147905179352830000",
		"44b52d02c7e14af5": "9.999999999999997e+22", "44b52d02c7e14af6": "1e+23", "44b52d02c7e14af7": "1.0000000000000001e+23",
		"444b1ae4d6e2ef4e": "999999999999999700000", "444b1ae4d6e2ef4f": "999999999999999900000", "444b1ae4d6e2ef50": "1e+21",
		"3eb0c6f7a0b5ed8c": "9.999999999999997e-7", "3eb0c6f7a0b5ed8d": "0.000001", "41b3de4355555553": "333333333.3333332",
		"41b3de4355555554": "333333333.33333325", "41b3de4355555555": "333333333.3333333", "41b3de4355555556": "333333333.3333334",
		"41b3de4355555557": "333333333.33333343", "becbf647612f3696": "-0.0000033333333333333333", "43143ff3c1cb0959": "1424953923781206.2",
	} {
		raw, _ := hex.DecodeString(bitsHex)
		var bits uint64
		for _, b := range raw {
			bits = bits<<8 | uint64(b)
		}
		if got := string(appendES(nil, math.Float64frombits(bits))); got != want {
			t.Errorf("%s: got %s, want %s", bitsHex, got, want)
		}
	}
}

// RFC 8785 §3.2.3 and §3.2.4 examples (1E30 left out: beyond ±(2^53−1),
// which the ledger refuses), each also against the ledger.
func TestCanonicalJSONExamples(t *testing.T) {
	for in, want := range map[string]string{
		`{"numbers": [333333333.33333329, 4.50, 2e-3, 0.000000000000000000000000001],
		  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
		  "literals": [null, true, false]}`: `{"literals":[null,true,false],"numbers":[333333333.3333333,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One",
		  "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}`: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
	} {
		got, err := canonicalJSON([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("got %s (%v)\nwant %s", got, err, want)
		}
		if lg, err := ledger.Canonicalize([]byte(in)); err != nil || !bytes.Equal(lg, got) {
			t.Errorf("the ledger gives %s (%v)", lg, err)
		}
	}
}

// randomJSON writes a random JSON value with random spacing.
func randomJSON(r *rand.Rand, depth int) string {
	sp := func() string { return []string{"", " ", "\n\t", "\r\n  "}[r.IntN(4)] }
	str := func() string {
		runes := []string{"a", "Z", "é", "€", "😀", "\u2028", "\\n", "\\u0001", "\\\"", "\\\\", "\\/", "\\ud83d\\ude00", "\\u00e9", "\u007f", "\\b", "\\uFB33"}
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(runes[r.IntN(len(runes))])
		}
		return `"` + b.String() + `"`
	}
	switch k := r.IntN(8); {
	case depth > 3 || k < 2:
		switch r.IntN(6) {
		case 0:
			return []string{"true", "false", "null"}[r.IntN(3)]
		case 1:
			return fmt.Sprint(r.Int64N(1<<53) - 1<<52)
		case 2:
			return fmt.Sprintf("%g", (r.Float64()-0.5)*math.Pow(10, float64(r.IntN(30)-20)))
		case 3:
			return fmt.Sprintf("%.3fE%d", r.Float64()*9, r.IntN(20)-12)
		default:
			return str()
		}
	case k < 5:
		var items []string
		for range r.IntN(4) {
			items = append(items, sp()+randomJSON(r, depth+1)+sp())
		}
		return "[" + strings.Join(items, ",") + "]"
	default:
		var members []string
		seen := map[string]bool{}
		for range r.IntN(5) {
			name := str()
			if seen[name] {
				continue
			}
			seen[name] = true
			members = append(members, sp()+name+sp()+":"+sp()+randomJSON(r, depth+1))
		}
		return "{" + strings.Join(members, ",") + sp() + "}"
	}
}

// The verifier's RFC 8785 encoder and the ledger's (a JCS library behind
// stricter input rules) agree on random JSON.
func TestCanonicalJSONMatchesLedger(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		in := randomJSON(r, 0)
		got, err := canonicalJSON([]byte(in))
		want, lerr := ledger.Canonicalize([]byte(in))
		if (err == nil) != (lerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%s\n got %s (%v)\nwant %s (%v)", in, got, err, want, lerr)
		}
	}
}

// FuzzCanonicalJSON: on any input the two encoders accept the same texts
// and print the same bytes.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5e-7,"\u00e9"]}`, `[9007199254740993]`, `"\ud800"`, `{"a":1,"a":2}`, `1E400`, `-0.0`, `[1e21, 1e-7]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := canonicalJSON(in)
		want, lerr := ledger.Canonicalize(in)
		if (err == nil) != (lerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%q\n got %s (%v)\nwant %s (%v)", in, got, err, want, lerr)
		}
	})
}

// The verifier's Merkle root, leaf encoding and note verification agree
// with the ledger's (the transparency-dev and x/mod libraries).
func TestMerkleAndNoteMatchLibrary(t *testing.T) {
	seed := sha256.Sum256([]byte("verify-ledger note test"))
	key := ed25519.NewKeyFromSeed(seed[:])
	writer, err := ledger.NewPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 40 {
		var leaves [][32]byte
		tree := tlog.NewTree()
		for i := range n {
			leaf := fmt.Appendf(nil, `{"i":%d}`, i)
			leaves = append(leaves, leafHash(leaf))
			tree.Append(tlog.LeafHash(leaf), nil)
		}
		if merkleRoot(leaves) != [32]byte(tree.Root()) {
			t.Fatalf("size %d: roots differ", n)
		}
		cp := ledger.Checkpoint{Origin: "example.org/ledger", Size: int64(n), Root: ledger.Hash(tree.Root())}
		note, err := ledger.SignCheckpoint(cp, writer)
		if err != nil {
			t.Fatal(err)
		}
		vkey, _ := tlog.VerifierKey(cp.Origin, key.Public().(ed25519.PublicKey))
		k, err := parseNoteKey(vkey)
		if err != nil {
			t.Fatal(err)
		}
		text, err := openNote(string(note), k)
		if err != nil || text != cp.String() {
			t.Fatalf("note %q: %q %v", note, text, err)
		}
		if c, err := parseBody(text); err != nil || c.size != int64(n) || c.root != [32]byte(cp.Root) || c.body() != text {
			t.Fatalf("body: %+v %v", c, err)
		}
		tampered := strings.Replace(string(note), fmt.Sprintf("\n%d\n", n), fmt.Sprintf("\n%d\n", n+1), 1)
		if _, err := openNote(tampered, k); err == nil {
			t.Fatal("an edited note verified")
		}
	}
	if _, err := parseNoteKey("example.org/ledger+00000000+AQ" + strings.Repeat("A", 42) + "="); err == nil {
		t.Fatal("a key hash that does not match its key was accepted")
	}
}
