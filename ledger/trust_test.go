package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Leaf is written by hand; it must be exactly the RFC 8785 form of the
// block's export line, whatever the field values.
func TestLeafIsCanonical(t *testing.T) {
	s := testSigners(t)
	blocks, _ := testChain(t, s, 3, nil)
	odd := Block{header: Header{Index: 7, Timestamp: "\u2028\x01\"é😀", Kind: "</script>", Writer: "w\\\t"}, witnesses: []WitnessSignature{{KeyID: "k\n"}, {KeyID: "a"}}}
	for _, b := range append(blocks, odd, Block{}) {
		line, err := b.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want, err := Canonicalize(line)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Leaf(); !bytes.Equal(got, want) {
			t.Fatalf("leaf\n got %s\nwant %s", got, want)
		}
	}
}

func TestTrustDocument(t *testing.T) {
	s := testSigners(t)
	blocks, _ := testChain(t, s, 20, map[int64]int64{13: 11})
	seams := pinSeams(t, blocks, Seam{Block: 13, Reason: "migration"})
	bridge := seededKey(t, "bridge")
	doc, err := NewTrustDocument(s, []PublishedKey{Publish(bridge.Public(), RoleBridge)}, blocks[0].Hash(), seams, 2, "example.org/ledger")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseTrustDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := got.Options()
	if err != nil || opts.Genesis != blocks[0].Hash() || len(opts.Seams) != 1 || opts.Seams[0] != seams[0] || opts.WitnessQuorum != 2 ||
		opts.Log.Origin != "example.org/ledger" || got.Legacy() {
		t.Fatalf("options %+v %v", opts, err)
	}
	// A bridge key is published with the others, and never accepted on a block.
	if _, err := opts.Keys.Lookup(bridge.ID(), RoleBridge); err != nil {
		t.Fatal(err)
	}
	if _, err := opts.Keys.Lookup(bridge.ID(), RoleWriter); !errors.Is(err, ErrKeyRole) {
		t.Fatalf("bridge key as writer: %v", err)
	}
	res, err := Verify(Values(blocks), opts)
	if err != nil || res.Verdict.Verdict != VerdictPassWithSeam {
		t.Fatalf("verify with the document's pins: %+v %v", res.Verdict, err)
	}

	legacy, err := ParseTrustDocument(must(json.Marshal(KeysDocument{Keys: s.KeySet().Published()})))
	if err != nil || !legacy.Legacy() || len(legacy.Keys) != 3 || len(legacy.DocumentedSeams) != 0 {
		t.Fatalf("legacy: %+v %v", legacy, err)
	}

	text := string(data)
	mutate := func(old, new string) string {
		if !strings.Contains(text, old) {
			t.Fatalf("no %q in the document", old)
		}
		return strings.Replace(text, old, new, 1)
	}
	for name, bad := range map[string]string{
		"unknown member":                   mutate(`"format"`, `"extra": 1, "format"`),
		"duplicate member":                 mutate(`"format"`, `"witness_quorum": 1, "format"`),
		"case variant":                     mutate(`"format"`, `"Format"`),
		"other format":                     mutate(TrustFormat, "proofsite-trust/9"),
		"missing log":                      mutate(`"witness_quorum": 2,`, `"witness_quorum": 2}`)[:strings.Index(text, `"log"`)] + "}",
		"unknown seam member":              mutate(`"reason"`, `"note": "x", "reason"`),
		"seam without hashes":              mutate(`"hash": "`+seams[0].Hash.String()+`",`, ``),
		"quorum above witnesses":           mutate(`"witness_quorum": 2`, `"witness_quorum": 3`),
		"quorum zero":                      mutate(`"witness_quorum": 2`, `"witness_quorum": 0`),
		"unknown role":                     mutate(`"role": "bridge"`, `"role": "admin"`),
		"checkpoint key of another origin": mutate(`"origin": "example.org/ledger"`, `"origin": "other.example/ledger"`),
		"null genesis":                     mutate(`"genesis_hash": "`+blocks[0].Hash().String()+`"`, `"genesis_hash": null`),
		"keys and format only":             `{"format":"proofsite-trust/1","keys":[]}`,
		"not an object":                    `[]`,
	} {
		if _, err := ParseTrustDocument([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A seam documents a break only when it pins that exact row.
func TestSeamPins(t *testing.T) {
	s := testSigners(t)
	blocks, _ := testChain(t, s, 20, map[int64]int64{13: 11})
	pinned := pinSeams(t, blocks, Seam{Block: 13, Reason: "migration"})
	opts := Options{Keys: s.KeySet(), Genesis: blocks[0].Hash()}
	for name, tc := range map[string]struct {
		seams []Seam
		want  string
		found string
	}{
		"pinned":          {pinned, VerdictPassWithSeam, ""},
		"no hashes":       {[]Seam{{Block: 13, Reason: "migration"}}, VerdictUndocumentedBreak, "documents nothing"},
		"other row pins":  {[]Seam{{Block: 13, Hash: blocks[12].Hash(), PrevHash: blocks[13].PrevHash()}}, VerdictUndocumentedBreak, "a different row"},
		"other prev_hash": {[]Seam{{Block: 13, Hash: blocks[13].Hash(), PrevHash: blocks[12].Hash()}}, VerdictUndocumentedBreak, "a different row"},
		"other block":     {[]Seam{{Block: 14, Hash: blocks[13].Hash(), PrevHash: blocks[13].PrevHash()}}, VerdictUndocumentedBreak, ""},
	} {
		opts.Seams = tc.seams
		res, err := Verify(Values(blocks), opts)
		if err != nil || res.Verdict.Verdict != tc.want || !strings.Contains(strings.Join(res.Verdict.Failures, "\n"), tc.found) {
			t.Errorf("%s: %s %q %v", name, res.Verdict.Verdict, res.Verdict.Failures, err)
		}
	}
	if _, err := PinSeams([]Seam{{Block: 20}}, blocks); err == nil {
		t.Error("pinned a seam beyond the chain")
	}
}
