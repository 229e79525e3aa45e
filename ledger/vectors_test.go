package ledger

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the vectors under testdata/vectors")

const vectorDir = "testdata/vectors"

// vector is one entry of testdata/vectors/manifest.json. Both verifiers
// (proofsite ledger verify --file and verify-ledger) run every entry; Args
// name the pins an auditor would pass on the command line.
type vector struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	File        string     `json:"file"`
	Args        vectorArgs `json:"args"`
	Want        vectorWant `json:"want"`
}

type vectorArgs struct {
	Genesis    string `json:"genesis,omitempty"`    // --genesis HASH
	Keys       string `json:"keys,omitempty"`       // --keys FILE (relative to the vector directory)
	Checkpoint string `json:"checkpoint,omitempty"` // --checkpoint SIZE:HASH
}

type vectorWant struct {
	Error                   bool   `json:"error,omitempty"` // the export must be refused as unreadable (exit 1, no verdict)
	Verdict                 string `json:"verdict,omitempty"`
	CanonicalSpineValid     bool   `json:"canonical_spine_valid"`
	StrictTableValid        bool   `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64 `json:"strict_table_break_at_block"`
}

// The base chain of the vectors: 20 rows with a documented seam like the
// real one (row 12 off the spine, row 13 linking to row 11).
const (
	vectorRows     = 20
	vectorOffSpine = 12
	vectorSeam     = 13
)

func TestVectors(t *testing.T) {
	if *update {
		writeVectors(t)
	}
	data, err := os.ReadFile(filepath.Join(vectorDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []vector
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 15 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			got, err := runVector(v)
			if v.Want.Error {
				if err == nil {
					t.Fatalf("accepted an unreadable export: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkVerdict(t, got, v.Want)
		})
	}
}

func checkVerdict(t *testing.T, got Verdict, want vectorWant) {
	t.Helper()
	if got.Verdict != want.Verdict || got.CanonicalSpineValid != want.CanonicalSpineValid || got.StrictTableValid != want.StrictTableValid ||
		(got.StrictTableBreakAtBlock == nil) != (want.StrictTableBreakAtBlock == nil) ||
		(got.StrictTableBreakAtBlock != nil && *got.StrictTableBreakAtBlock != *want.StrictTableBreakAtBlock) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.Marshal(want)
		t.Fatalf("got %s\nwant %s", g, w)
	}
	if !got.CanonicalSpineValid && got.Pass() {
		t.Fatal("a broken spine passed")
	}
}

// runVector verifies a vector the way the CLI does: pins from the command
// line win over the export header.
func runVector(v vector) (Verdict, error) {
	f, err := os.Open(filepath.Join(vectorDir, v.File))
	if err != nil {
		return Verdict{}, err
	}
	defer f.Close()
	r, err := NewReader(f)
	if err != nil {
		return Verdict{}, err
	}
	opts := Options{Keys: r.Keys(), Genesis: r.Header().GenesisHash, Seams: r.Header().DocumentedSeams}
	if v.Args.Genesis != "" {
		if opts.Genesis, err = ParseHash(v.Args.Genesis); err != nil {
			return Verdict{}, err
		}
	}
	if v.Args.Keys != "" {
		data, err := os.ReadFile(filepath.Join(vectorDir, v.Args.Keys))
		if err != nil {
			return Verdict{}, err
		}
		var doc KeysDocument
		if err := json.Unmarshal(data, &doc); err != nil {
			return Verdict{}, err
		}
		if opts.Keys, err = NewKeySet(doc.Keys); err != nil {
			return Verdict{}, err
		}
	}
	if v.Args.Checkpoint != "" {
		cp, err := ParseCheckpoint(v.Args.Checkpoint)
		if err != nil {
			return Verdict{}, err
		}
		opts.Checkpoint = &cp
	}
	res, err := Verify(r.Blocks(), opts)
	return res.Verdict, err
}

// writeVectors regenerates testdata/vectors from deterministic keys. Every
// tampered file is the base export with one change an attacker (or an
// accident) could make.
func writeVectors(t *testing.T) {
	s := testSigners(t)
	links := map[int64]int64{vectorSeam: vectorSeam - 2}
	blocks, _ := testChain(t, s, vectorRows, links)
	seams := []Seam{{Block: vectorSeam, Reason: "row 12 was written during a storage migration and superseded; row 13 links to row 11"}}
	hdr := ExportHeader{GenesisHash: blocks[0].Hash(), Keys: s.KeySet().Published(), DocumentedSeams: seams}
	base := exportLines(t, hdr, blocks)

	attacker := Signers{Writer: seededKey(t, "attacker")}
	var vectors []vector
	add := func(name, desc string, lines []string, args vectorArgs, want vectorWant) {
		file := name + ".jsonl"
		if err := os.WriteFile(filepath.Join(vectorDir, file), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		vectors = append(vectors, vector{Name: name, Description: desc, File: file, Args: args, Want: want})
	}
	at := func(i int64) *int64 { return &i }
	seamPass := vectorWant{Verdict: VerdictPassWithSeam, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(vectorSeam)}
	spineBroken := func(breakAt int64) vectorWant {
		return vectorWant{Verdict: VerdictSpineBroken, StrictTableBreakAtBlock: at(breakAt)}
	}
	undocumented := func(breakAt int64) vectorWant {
		return vectorWant{Verdict: VerdictUndocumentedBreak, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(breakAt)}
	}
	line := func(i int) string { return base[1+i] } // base[0] is the header
	replace := func(i int, l string) []string {
		out := clone(base)
		out[1+i] = l
		return out
	}
	if err := os.MkdirAll(vectorDir, 0o755); err != nil {
		t.Fatal(err)
	}
	keysDoc, _ := json.MarshalIndent(KeysDocument{Keys: s.KeySet().Published()}, "", "  ")
	if err := os.WriteFile(filepath.Join(vectorDir, "keys.json"), append(keysDoc, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}

	add("base", "the untampered chain: spine valid, documented seam at 13", base, vectorArgs{}, seamPass)
	add("base_pinned", "the untampered chain with genesis and keys pinned on the command line",
		base, vectorArgs{Genesis: blocks[0].Hash().String(), Keys: "keys.json"}, seamPass)
	linear, _ := testChain(t, s, vectorRows, nil)
	add("linear", "a chain with no seam passes outright", exportLines(t, hdr, linear), vectorArgs{},
		vectorWant{Verdict: VerdictPass, CanonicalSpineValid: true, StrictTableValid: true})
	noSeam := clone(base)
	noSeam[0] = headerLine(t, ExportHeader{GenesisHash: hdr.GenesisHash, Keys: hdr.Keys})
	add("seam_not_documented", "the same chain with no documented seam: an undocumented break", noSeam, vectorArgs{}, undocumented(vectorSeam))

	add("spine_payload_hash_changed", "row 5 claims another payload", replace(5, setField(t, line(5), "payload_hash", strings.Repeat("ab", 32))), vectorArgs{}, spineBroken(5))
	add("spine_timestamp_changed", "row 5 is back-dated", replace(5, setField(t, line(5), "timestamp", "2024-12-31T23:59:59Z")), vectorArgs{}, spineBroken(5))
	add("spine_kind_changed", "row 5 claims another kind", replace(5, setField(t, line(5), "kind", "gate_decision_override")), vectorArgs{}, spineBroken(5))
	add("spine_prev_hash_changed", "row 5 links to row 3", replace(5, setField(t, line(5), "prev_hash", blocks[3].Hash().String())), vectorArgs{}, spineBroken(5))
	rehashed := blocks[5].Header()
	rehashed.Kind = "audit_forged"
	add("spine_row_rehashed", "row 5 changed and its hash recomputed, but not re-signed",
		replace(5, setField(t, line(5), "kind", "audit_forged", "hash", rehashed.Hash().String())), vectorArgs{}, spineBroken(5))
	add("off_spine_row_changed", "the off-spine row 12 is altered: the spine holds, the table has an invalid row",
		replace(vectorOffSpine, setField(t, line(vectorOffSpine), "kind", "audit")),
		vectorArgs{}, vectorWant{Verdict: VerdictInvalidRow, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(vectorOffSpine)})
	add("off_spine_row_deleted", "the off-spine row 12 is removed: a gap, which no seam documents",
		without(base, 1+vectorOffSpine), vectorArgs{}, undocumented(vectorSeam))
	add("spine_row_deleted", "row 5 is removed", without(base, 1+5), vectorArgs{}, spineBroken(6))
	swapped := clone(base)
	swapped[1+5], swapped[1+6] = swapped[1+6], swapped[1+5]
	add("rows_swapped", "rows 5 and 6 are swapped: the spine holds, the table is out of order", swapped, vectorArgs{}, undocumented(6))
	dup := append(clone(base[:1+6]), base[1+5:]...)
	add("row_duplicated", "row 5 appears twice", dup, vectorArgs{}, undocumented(5))

	truncated := clone(base[:len(base)-3])
	add("truncated_head", "the last 3 rows are cut off; nothing inside the export can tell (see checkpoint vectors)", truncated, vectorArgs{}, seamPass)
	full := Checkpoint{Size: vectorRows, HeadHash: blocks[vectorRows-1].Hash()}
	add("truncated_head_with_checkpoint", "the same truncated export against the checkpoint the auditor kept",
		truncated, vectorArgs{Checkpoint: full.String()}, vectorWant{Verdict: VerdictCheckpoint, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(vectorSeam)})
	earlier := Checkpoint{Size: 15, HeadHash: blocks[14].Hash()}
	add("extends_checkpoint", "the full chain extends an earlier checkpoint", base, vectorArgs{Checkpoint: earlier.String()}, seamPass)
	// A writer-key thief rewrites history from row 15 on and re-signs it:
	// self-consistent, caught only by a checkpoint taken before the rewrite.
	rows := testHistory(vectorRows, links)
	for i := 15; i < vectorRows; i++ {
		rows[i].Payload = []byte(`{"rewritten":true}`)
	}
	rewritten, _, err := SealHistory(rows, s)
	if err != nil {
		t.Fatal(err)
	}
	rewrittenLines := exportLines(t, hdr, rewritten)
	add("rewritten_tail", "rows 15-19 rewritten and re-signed with the stolen writer key: self-consistent", rewrittenLines, vectorArgs{}, seamPass)
	add("rewritten_tail_with_checkpoint", "the rewritten chain against a checkpoint taken at size 17",
		rewrittenLines, vectorArgs{Checkpoint: Checkpoint{Size: 17, HeadHash: blocks[16].Hash()}.String()},
		vectorWant{Verdict: VerdictCheckpoint, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(vectorSeam)})

	forgedHead := blocks[vectorRows-1].Header()
	forged, err := Seal(forgedHead, attacker)
	if err != nil {
		t.Fatal(err)
	}
	forgedLine := string(must(forged.MarshalJSON()))
	add("unknown_key_signature", "the head is re-signed by a key that is not published", replace(vectorRows-1, forgedLine), vectorArgs{}, spineBroken(vectorSeam)) // the first failing row is the documented seam
	selfPublished := replace(vectorRows-1, forgedLine)
	selfPublished[0] = headerLine(t, ExportHeader{GenesisHash: hdr.GenesisHash, Keys: append(clone(hdr.Keys), Publish(attacker.Writer.Public(), RoleWriter)), DocumentedSeams: seams})
	add("unknown_key_self_published_pinned", "the forger also lists its key in the export header; the auditor pins the published keys",
		selfPublished, vectorArgs{Keys: "keys.json"}, spineBroken(vectorSeam))
	add("unknown_key_self_published_unpinned", "the same export trusted blindly: it verifies against itself, which is why keys must be pinned",
		selfPublished, vectorArgs{}, seamPass)

	var w8 []map[string]any
	var w7 []map[string]any
	mustUnmarshal(t, getField(t, line(8), "witnesses"), &w8)
	mustUnmarshal(t, getField(t, line(7), "witnesses"), &w7)
	w8[0] = w7[0]
	add("witness_signature_moved", "row 7's first witness signature is copied onto row 8", replace(8, setField(t, line(8), "witnesses", w8)), vectorArgs{}, spineBroken(8))

	broken, _ := testChain(t, s, vectorRows, map[int64]int64{vectorSeam: vectorSeam - 2, 17: 15})
	add("new_undocumented_break", "a properly signed chain whose row 17 skips row 16: a second, undocumented seam",
		exportLines(t, hdr, broken), vectorArgs{}, undocumented(vectorSeam))

	add("genesis_mismatch", "the auditor's pinned genesis is not this chain's", base,
		vectorArgs{Genesis: strings.Repeat("0", 63) + "1"}, vectorWant{Verdict: VerdictGenesisMismatch, StrictTableBreakAtBlock: at(vectorSeam)})
	otherChain, _ := testChain(t, attacker, vectorRows, links)
	otherHdr := ExportHeader{GenesisHash: otherChain[0].Hash(), Keys: attacker.KeySet().Published(), DocumentedSeams: seams}
	add("forged_chain_pinned", "a whole chain forged with the forger's own keys, against the published genesis and keys",
		exportLines(t, otherHdr, otherChain), vectorArgs{Genesis: blocks[0].Hash().String(), Keys: "keys.json"},
		vectorWant{Verdict: VerdictSpineBroken, StrictTableBreakAtBlock: at(0)})

	add("duplicate_member", "a line names kind twice (parsers disagree on which wins): refused",
		replace(5, strings.Replace(line(5), `{`, `{"kind":"forged",`, 1)), vectorArgs{}, vectorWant{Error: true})
	add("case_variant_member", `a line spells "KIND": refused`, replace(5, strings.Replace(line(5), `"kind"`, `"KIND"`, 1)), vectorArgs{}, vectorWant{Error: true})
	add("malformed_line", "a line is cut in half: refused", replace(5, line(5)[:40]), vectorArgs{}, vectorWant{Error: true})

	out, _ := json.MarshalIndent(vectors, "", "  ")
	if err := os.WriteFile(filepath.Join(vectorDir, "manifest.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exportLines(t *testing.T, h ExportHeader, blocks []Block) []string {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := w.Write(Row{Block: b}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

func headerLine(t *testing.T, h ExportHeader) string {
	return exportLines(t, h, nil)[0]
}

// setField rewrites members of one JSON line, keeping the member order.
func setField(t *testing.T, line string, kv ...any) string {
	t.Helper()
	var m orderedObject
	mustUnmarshal(t, []byte(line), &m)
	for i := 0; i < len(kv); i += 2 {
		raw, err := json.Marshal(kv[i+1])
		if err != nil {
			t.Fatal(err)
		}
		m.set(kv[i].(string), raw)
	}
	return string(must(json.Marshal(m)))
}

func getField(t *testing.T, line, name string) []byte {
	var m orderedObject
	mustUnmarshal(t, []byte(line), &m)
	for i, k := range m.keys {
		if k == name {
			return m.vals[i]
		}
	}
	t.Fatalf("no member %q", name)
	return nil
}

// orderedObject is a JSON object that keeps its member order.
type orderedObject struct {
	keys []string
	vals []json.RawMessage
}

func (o *orderedObject) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		o.keys = append(o.keys, k.(string))
		o.vals = append(o.vals, v)
	}
	return nil
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[i])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o *orderedObject) set(k string, v json.RawMessage) {
	for i, key := range o.keys {
		if key == k {
			o.vals[i] = v
			return
		}
	}
	o.keys, o.vals = append(o.keys, k), append(o.vals, v)
}

func clone[T any](s []T) []T { return append([]T(nil), s...) }

func without(s []string, i int) []string { return append(clone(s[:i]), s[i+1:]...) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}
