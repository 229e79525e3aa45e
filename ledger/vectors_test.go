package ledger

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the vectors under testdata/vectors")

const vectorDir = "testdata/vectors"

// vector is one entry of testdata/vectors/manifest.json. Every verifier
// runs every entry (ledger.VerifyRows over the export, the store's full
// walk over the same rows, verify-ledger offline and in URL mode, and
// proofsite ledger verify --file); Args name the pins an auditor would pass
// on the command line.
type vector struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	File        string     `json:"file"`
	Args        vectorArgs `json:"args"`
	Want        vectorWant `json:"want"`
}

type vectorArgs struct {
	Genesis    string `json:"genesis,omitempty"`    // --genesis HASH
	Keys       string `json:"keys,omitempty"`       // --keys FILE (relative to the vector directory): a trust document or the legacy keys file
	Checkpoint string `json:"checkpoint,omitempty"` // --checkpoint NOTE: a remembered checkpoint
}

type vectorWant struct {
	Error                   bool   `json:"error,omitempty"` // the export must be refused as unreadable (exit 1, no verdict)
	Verdict                 string `json:"verdict,omitempty"`
	CanonicalSpineValid     bool   `json:"canonical_spine_valid"`
	StrictTableValid        bool   `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64 `json:"strict_table_break_at_block"`
	Warnings                int    `json:"warnings,omitempty"` // number of warnings (timestamps going backwards)
}

// The base chain of the vectors: 20 rows with a documented seam like the
// real one (row 12 off the spine, row 13 linking to row 11).
const (
	vectorRows     = 20
	vectorOffSpine = 12
	vectorSeam     = 13
	vectorOrigin   = "vectors.proofsite.test/ledger"
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
	if len(vectors) < 40 {
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
		(got.StrictTableBreakAtBlock != nil && *got.StrictTableBreakAtBlock != *want.StrictTableBreakAtBlock) || len(got.Warnings) != want.Warnings {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.Marshal(want)
		t.Fatalf("got %s\nwant %s", g, w)
	}
	if !got.CanonicalSpineValid && got.Pass() {
		t.Fatal("a broken spine passed")
	}
}

// runVector verifies a vector the way the CLI does: the trust document
// given with --keys pins everything; without it only the header's keys and
// genesis are used, and no seam is documented.
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
	var trust *TrustDocument
	if v.Args.Keys != "" {
		data, err := os.ReadFile(filepath.Join(vectorDir, v.Args.Keys))
		if err != nil {
			return Verdict{}, err
		}
		doc, err := ParseTrustDocument(data)
		if err != nil {
			return Verdict{}, err
		}
		trust = &doc
	}
	opts, err := r.Options(trust)
	if err != nil {
		return Verdict{}, err
	}
	if v.Args.Genesis != "" {
		if opts.Genesis, err = ParseHash(v.Args.Genesis); err != nil {
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
	res, err := VerifyRows(r.Rows(), opts)
	return res.Verdict, err
}

// vectorSet builds the vector files. Every tampered file is the base
// export with one change an attacker (or an accident) could make.
type vectorSet struct {
	t       *testing.T
	vectors []vector
}

func (vs *vectorSet) add(name, desc string, lines []string, args vectorArgs, want vectorWant) {
	file := name + ".jsonl"
	if err := os.WriteFile(filepath.Join(vectorDir, file), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		vs.t.Fatal(err)
	}
	vs.vectors = append(vs.vectors, vector{Name: name, Description: desc, File: file, Args: args, Want: want})
}

func (vs *vectorSet) writeJSON(name string, v any) {
	data, _ := json.MarshalIndent(v, "", "  ")
	if err := os.WriteFile(filepath.Join(vectorDir, name), append(data, '\n'), 0o644); err != nil {
		vs.t.Fatal(err)
	}
}

// signedExport is an export of blocks whose header carries the checkpoint
// over them, signed by w (the writer, or whoever holds its key).
func signedExport(t *testing.T, h ExportHeader, blocks []Block, privs []Private, w PrivateKey) []string {
	t.Helper()
	h.Checkpoint = string(signedCheckpoint(t, blocks, w))
	return exportRows(t, h, blocks, privs)
}

func signedCheckpoint(t *testing.T, blocks []Block, w PrivateKey) []byte {
	t.Helper()
	res, err := Verify(Values(blocks), Options{Keys: KeySet{}, Log: LogPin{Origin: vectorOrigin}})
	if err != nil {
		t.Fatal(err)
	}
	note, err := SignCheckpoint(*res.Verdict.Checkpoint, w)
	if err != nil {
		t.Fatal(err)
	}
	return note
}

// writeVectors regenerates testdata/vectors from deterministic keys.
func writeVectors(t *testing.T) {
	s := testSigners(t)
	links := map[int64]int64{vectorSeam: vectorSeam - 2}
	blocks, privs := testChain(t, s, vectorRows, links)
	seams := pinSeams(t, blocks, Seam{Block: vectorSeam, Reason: "row 12 was written during a storage migration and superseded; row 13 links to row 11"})
	hdr := ExportHeader{GenesisHash: blocks[0].Hash(), Keys: s.KeySet().Published(), DocumentedSeams: seams}
	base := signedExport(t, hdr, blocks, nil, s.Writer)
	bare := clone(base) // the base rows under a header without a checkpoint: what a forger without the writer key shows
	bare[0] = headerLine(t, hdr)

	attacker := Signers{Writer: seededKey(t, "attacker"), Witnesses: []PrivateKey{seededKey(t, "attacker-w1"), seededKey(t, "attacker-w2")}}
	vs := &vectorSet{t: t}
	add := vs.add
	at := func(i int64) *int64 { return &i }
	seamPass := vectorWant{Verdict: VerdictPassWithSeam, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(vectorSeam)}
	spineBroken := func(breakAt int64) vectorWant {
		return vectorWant{Verdict: VerdictSpineBroken, StrictTableBreakAtBlock: at(breakAt)}
	}
	undocumented := func(breakAt int64) vectorWant {
		return vectorWant{Verdict: VerdictUndocumentedBreak, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(breakAt)}
	}
	invalidRow := func(breakAt int64) vectorWant {
		return vectorWant{Verdict: VerdictInvalidRow, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(breakAt)}
	}
	notExtended := vectorWant{Verdict: VerdictCheckpoint, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(vectorSeam)}
	line := func(i int) string { return bare[1+i] }
	replace := func(i int, l string) []string { // a tampered row under the header without a checkpoint
		out := clone(bare)
		out[1+i] = l
		return out
	}
	if err := os.MkdirAll(vectorDir, 0o755); err != nil {
		t.Fatal(err)
	}
	trust, err := NewTrustDocument(s, nil, blocks[0].Hash(), seams, DefaultWitnessQuorum, vectorOrigin)
	if err != nil {
		t.Fatal(err)
	}
	pinned := vectorArgs{Keys: "trust.json"}
	vs.writeJSON("trust.json", trust)
	vs.writeJSON("keys.json", KeysDocument{Keys: s.KeySet().Published()})
	noSeams := trust
	noSeams.DocumentedSeams = []Seam{}
	vs.writeJSON("trust_no_seams.json", noSeams)
	wrongPins := trust
	wrongPins.DocumentedSeams = []Seam{{Block: vectorSeam, Hash: blocks[vectorOffSpine].Hash(), PrevHash: blocks[vectorSeam].PrevHash(), Reason: seams[0].Reason}}
	vs.writeJSON("trust_wrong_seam_pins.json", wrongPins)
	remember := func(n int, bs []Block) string { return string(signedCheckpoint(t, bs[:n], s.Writer)) }

	add("base", "the untampered chain, every pin from the trust document: spine valid, documented seam at 13", base, pinned, seamPass)
	add("base_unpinned", "the same export with no trust document: the header's seam is information, not authority, so the break at 13 is undocumented",
		base, vectorArgs{}, undocumented(vectorSeam))
	add("base_legacy_keys", "keys and genesis pinned with the legacy keys file, which pins no seam", base,
		vectorArgs{Genesis: blocks[0].Hash().String(), Keys: "keys.json"}, undocumented(vectorSeam))
	linear, _ := testChain(t, s, vectorRows, nil)
	add("linear", "a chain with no seam passes outright (the pinned seam goes unused)", signedExport(t, hdr, linear, nil, s.Writer), pinned,
		vectorWant{Verdict: VerdictPass, CanonicalSpineValid: true, StrictTableValid: true})
	add("seam_not_documented", "the trust document documents no seam: the break at 13 is undocumented", base,
		vectorArgs{Keys: "trust_no_seams.json"}, undocumented(vectorSeam))
	add("seam_wrong_pins", "the pinned seam names another row's hash at block 13: it documents nothing", base,
		vectorArgs{Keys: "trust_wrong_seam_pins.json"}, undocumented(vectorSeam))

	// The seam row replaced by another, signed with the real keys (a key
	// thief): the tail is re-signed so the spine holds, but row 13 is not
	// the row the seam pins.
	rows := testHistory(vectorRows, links)
	rows[vectorSeam].Payload = []byte(`{"replaced":true}`)
	replacedSeam, _, err := SealHistory(rows, s)
	if err != nil {
		t.Fatal(err)
	}
	add("seam_row_replaced", "row 13 (the documented seam) replaced by another row linking to 11, re-signed with the real keys, the tail and the checkpoint re-signed too",
		signedExport(t, hdr, replacedSeam, nil, s.Writer), pinned, undocumented(vectorSeam))

	add("spine_payload_hash_changed", "row 5 claims another payload", replace(5, setField(t, line(5), "payload_hash", strings.Repeat("ab", 32))), pinned, spineBroken(5))
	add("spine_timestamp_changed", "row 5 is back-dated", replace(5, setField(t, line(5), "timestamp", "2024-12-31T23:59:59Z")), pinned, spineBroken(5))
	add("spine_kind_changed", "row 5 claims another kind", replace(5, setField(t, line(5), "kind", "gate_decision_override")), pinned, spineBroken(5))
	add("spine_prev_hash_changed", "row 5 links to row 3", replace(5, setField(t, line(5), "prev_hash", blocks[3].Hash().String())), pinned, spineBroken(5))
	rehashed := blocks[5].Header()
	rehashed.Kind = "audit_forged"
	add("spine_row_rehashed", "row 5 changed and its hash recomputed, but not re-signed",
		replace(5, setField(t, line(5), "kind", "audit_forged", "hash", rehashed.Hash().String())), pinned, spineBroken(5))
	add("off_spine_row_changed", "the off-spine row 12 is altered: the spine holds, the table has an invalid row",
		replace(vectorOffSpine, setField(t, line(vectorOffSpine), "kind", "audit")), pinned, invalidRow(vectorOffSpine))
	add("off_spine_row_deleted", "the off-spine row 12 is removed: a gap, which no seam documents",
		without(bare, 1+vectorOffSpine), pinned, undocumented(vectorSeam))
	add("spine_row_deleted", "row 5 is removed", without(bare, 1+5), pinned, spineBroken(6))
	swapped := clone(bare)
	swapped[1+5], swapped[1+6] = swapped[1+6], swapped[1+5]
	add("rows_swapped", "rows 5 and 6 are swapped: the spine holds, the table is out of order", swapped, pinned, undocumented(6))
	add("row_duplicated", "row 5 appears twice", append(clone(bare[:1+6]), bare[1+5:]...), pinned, undocumented(5))

	// Witnesses: the quorum is 2 distinct pinned witnesses on every block.
	var w5 []map[string]any
	mustUnmarshal(t, getField(t, line(5), "witnesses"), &w5)
	add("witnesses_stripped", "row 5's witness signatures are removed (the hash does not cover them): below the quorum of 2",
		replace(5, setField(t, line(5), "witnesses", []any{})), pinned, spineBroken(5))
	add("witness_one_stripped", "one of row 5's two witness signatures is removed: below the quorum of 2",
		replace(5, setField(t, line(5), "witnesses", w5[:1])), pinned, spineBroken(5))
	add("witness_duplicated", "row 5 lists its first witness twice and drops the second",
		replace(5, setField(t, line(5), "witnesses", []any{w5[0], w5[0]})), pinned, spineBroken(5))
	add("off_spine_witnesses_stripped", "the off-spine row 12 loses its witness signatures",
		replace(vectorOffSpine, setField(t, line(vectorOffSpine), "witnesses", []any{})), pinned, invalidRow(vectorOffSpine))
	var w8, w7 []map[string]any
	mustUnmarshal(t, getField(t, line(8), "witnesses"), &w8)
	mustUnmarshal(t, getField(t, line(7), "witnesses"), &w7)
	w8[0] = w7[0]
	add("witness_signature_moved", "row 7's first witness signature is copied onto row 8", replace(8, setField(t, line(8), "witnesses", w8)), pinned, spineBroken(8))

	// Private exports: every payload a verifier holds must hash to payload_hash.
	privHdr := hdr
	privHdr.Private = true
	private := signedExport(t, privHdr, blocks, privs, s.Writer)
	add("private_base", "the --private export of the base chain: every payload hashes to its payload_hash", private, pinned, seamPass)
	changedPayload := clone(private)
	changedPayload[1+5] = setField(t, private[1+5], "payload", map[string]any{"n": 5, "note": "changed behind its hash"})
	add("private_payload_changed", "row 5's payload is changed behind its payload_hash in a --private export", changedPayload, pinned, spineBroken(5))
	changedOff := clone(private)
	changedOff[1+vectorOffSpine] = setField(t, private[1+vectorOffSpine], "payload", map[string]any{"n": 99})
	add("private_off_spine_payload_changed", "the off-spine row 12's payload is changed behind its hash", changedOff, pinned, invalidRow(vectorOffSpine))

	// Checkpoints: the Merkle root over every row.
	truncated := signedExport(t, hdr, blocks[:vectorRows-3], nil, s.Writer)
	add("truncated_head", "the last 3 rows are cut off and the checkpoint re-signed with the writer key: nothing inside the export can tell", truncated, pinned, seamPass)
	add("truncated_head_with_checkpoint", "the same truncated export against the checkpoint the auditor remembered at 20 rows",
		truncated, vectorArgs{Keys: "trust.json", Checkpoint: remember(vectorRows, blocks)}, notExtended)
	add("extends_checkpoint", "the full chain extends a remembered checkpoint at 15 rows", base,
		vectorArgs{Keys: "trust.json", Checkpoint: remember(15, blocks)}, seamPass)
	add("same_checkpoint", "the full chain against the checkpoint of the same 20 rows", base,
		vectorArgs{Keys: "trust.json", Checkpoint: remember(vectorRows, blocks)}, seamPass)
	// A key thief rewrites history from row 15 on and re-signs it:
	// self-consistent, caught only by a checkpoint taken before the rewrite.
	rows = testHistory(vectorRows, links)
	for i := 15; i < vectorRows; i++ {
		rows[i].Payload = []byte(`{"rewritten":true}`)
	}
	rewritten, _, err := SealHistory(rows, s)
	if err != nil {
		t.Fatal(err)
	}
	rewrittenLines := signedExport(t, hdr, rewritten, nil, s.Writer)
	add("rewritten_tail", "rows 15-19 rewritten and re-signed with the stolen keys, checkpoint too: self-consistent", rewrittenLines, pinned, seamPass)
	add("rewritten_tail_with_checkpoint", "the rewritten chain against a checkpoint remembered at 17 rows",
		rewrittenLines, vectorArgs{Keys: "trust.json", Checkpoint: remember(17, blocks)}, notExtended)
	// The off-spine row replaced by another one signed with the real keys:
	// it is valid on its own and nothing links to it, so only a checkpoint
	// can tell.
	rows = testHistory(vectorRows, links)
	rows[vectorOffSpine].Payload = []byte(`{"replaced":"off-spine"}`)
	offReplaced, _, err := SealHistory(rows, s)
	if err != nil {
		t.Fatal(err)
	}
	add("off_spine_row_replaced", "the off-spine row 12 replaced by another row signed with the stolen keys, checkpoint re-signed: locally undetectable",
		signedExport(t, hdr, offReplaced, nil, s.Writer), pinned, seamPass)
	add("off_spine_row_replaced_with_checkpoint", "the same export against the checkpoint remembered at 20 rows",
		signedExport(t, hdr, offReplaced, nil, s.Writer), vectorArgs{Keys: "trust.json", Checkpoint: remember(vectorRows, blocks)}, notExtended)
	stale := exportRows(t, hdr, offReplaced, nil)
	stale[0] = base[0] // the original header with its checkpoint: the thief did not re-sign it
	add("presented_checkpoint_stale", "the off-spine row 12 replaced, the export still presents the original signed checkpoint: its root does not match",
		stale, pinned, vectorWant{Verdict: VerdictCheckpointInvalid, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(vectorSeam)})
	forgedCp := clone(base)
	fh := hdr
	fh.Checkpoint = string(signedCheckpoint(t, blocks, attacker.Writer))
	forgedCp[0] = headerLine(t, fh)
	add("presented_checkpoint_forged", "the export presents a checkpoint over its rows signed by a key that is not the pinned checkpoint key",
		forgedCp, pinned, vectorWant{Verdict: VerdictCheckpointInvalid, CanonicalSpineValid: true, StrictTableBreakAtBlock: at(vectorSeam)})

	forged, err := Seal(blocks[vectorRows-1].Header(), attacker)
	if err != nil {
		t.Fatal(err)
	}
	forgedLine := string(must(forged.MarshalJSON()))
	add("unknown_key_signature", "the head is re-signed by keys that are not published", replace(vectorRows-1, forgedLine), pinned, spineBroken(vectorSeam)) // the first failing row is the documented seam
	selfPublished := replace(vectorRows-1, forgedLine)
	selfPublished[0] = headerLine(t, ExportHeader{GenesisHash: hdr.GenesisHash, Keys: attacker.KeySet().Published(), DocumentedSeams: seams})
	add("unknown_key_self_published_pinned", "the forger lists its own keys in the export header; the auditor pins the published ones",
		selfPublished, pinned, spineBroken(vectorSeam))
	// The forger publishes its own writer and witness keys beside the real ones.
	selfOnly := exportRows(t, ExportHeader{GenesisHash: blocks[0].Hash(), Keys: append(s.KeySet().Published(), attacker.KeySet().Published()...), DocumentedSeams: seams}, blocks[:vectorRows-1], nil)
	selfOnly = append(selfOnly, forgedLine)
	add("unknown_key_self_published_unpinned", "the same forgery trusted blindly (no --keys): the spine verifies against the export's own keys, which is why keys must be pinned; only the unpinned seam fails it",
		selfOnly, vectorArgs{}, undocumented(vectorSeam))

	broken, _ := testChain(t, s, vectorRows, map[int64]int64{vectorSeam: vectorSeam - 2, 17: 15})
	add("new_undocumented_break", "a properly signed chain whose row 17 skips row 16: a second, undocumented seam",
		signedExport(t, hdr, broken, nil, s.Writer), pinned, undocumented(vectorSeam))

	add("genesis_mismatch", "the auditor's pinned genesis is not this chain's", base,
		vectorArgs{Keys: "trust.json", Genesis: strings.Repeat("0", 63) + "1"}, vectorWant{Verdict: VerdictGenesisMismatch, StrictTableBreakAtBlock: at(vectorSeam)})
	otherChain, _ := testChain(t, attacker, vectorRows, links)
	otherHdr := ExportHeader{GenesisHash: otherChain[0].Hash(), Keys: attacker.KeySet().Published(), DocumentedSeams: seams}
	add("forged_chain_pinned", "a whole chain forged with the forger's own keys, against the pinned trust document",
		signedExport(t, otherHdr, otherChain, nil, attacker.Writer), pinned, vectorWant{Verdict: VerdictSpineBroken, StrictTableBreakAtBlock: at(0)})

	// Timestamps going backwards along the spine are a warning, not a failure.
	rows = testHistory(vectorRows, links)
	rows[7].Timestamp = FormatTimestamp(testEpoch.Add(5*time.Hour + 30*time.Minute))
	backwards, _, err := SealHistory(rows, s)
	if err != nil {
		t.Fatal(err)
	}
	backSeams := pinSeams(t, backwards, Seam{Block: vectorSeam, Reason: seams[0].Reason})
	backTrust, err := NewTrustDocument(s, nil, backwards[0].Hash(), backSeams, DefaultWitnessQuorum, vectorOrigin)
	if err != nil {
		t.Fatal(err)
	}
	vs.writeJSON("trust_backwards.json", backTrust)
	seamWarn := seamPass
	seamWarn.Warnings = 1
	add("timestamps_backwards", "row 7 is dated before row 6 and signed that way: a warning, still a pass",
		signedExport(t, ExportHeader{GenesisHash: backwards[0].Hash(), Keys: hdr.Keys, DocumentedSeams: backSeams}, backwards, nil, s.Writer),
		vectorArgs{Keys: "trust_backwards.json"}, seamWarn)

	add("duplicate_member", "a line names kind twice (parsers disagree on which wins): refused",
		replace(5, strings.Replace(line(5), `{`, `{"kind":"forged",`, 1)), pinned, vectorWant{Error: true})
	add("case_variant_member", `a line spells "KIND": refused`, replace(5, strings.Replace(line(5), `"kind"`, `"KIND"`, 1)), pinned, vectorWant{Error: true})
	add("malformed_line", "a line is cut in half: refused", replace(5, line(5)[:40]), pinned, vectorWant{Error: true})

	out, _ := json.MarshalIndent(vs.vectors, "", "  ")
	if err := os.WriteFile(filepath.Join(vectorDir, "manifest.json"), append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exportRows(t *testing.T, h ExportHeader, blocks []Block, privs []Private) []string {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		row := Row{Block: b}
		if privs != nil {
			row.Private = &privs[i]
		}
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

func headerLine(t *testing.T, h ExportHeader) string {
	return exportRows(t, h, nil, nil)[0]
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
