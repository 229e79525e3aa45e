package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/ledger"
)

// FuzzMutation applies one random mutation to an honest --private export
// (payload, a header field of a row, a signature, the witness list, row
// order, row deletion or duplication, the seam row, the export header) and
// runs two verifiers on it, ledger.VerifyRows and verify-ledger, both with
// the pinned trust document. (The store's walk is ledger.VerifyRows over
// its rows; TestVectorsEveryVerifier holds it to the same verdicts.)
//
// What local verification cannot see, precisely: a truncated head (the
// rows that remain are consistent with themselves), and a mutation that
// leaves every row's hash in place and every signature valid. The hash covers
// every header field, and payload_hash covers the payload's canonical
// form, so such a mutation only touches what no signature covers: the
// order of a row's witness signatures, JSON spelling (member order,
// escapes, number formatting, whitespace) of a row or its payload, a
// row's private description, and the export header, which is information
// (its keys, genesis and seams are pinned from the trust document; its
// checkpoint is optional). Rows re-signed with the real keys are the other
// blind spot; no mutation here holds the keys.
//
// Asserted: without a checkpoint (the header's stripped), a verifier that
// passes saw the honest row hashes in order, or a prefix of them. With
// the checkpoint remembered at the honest size, a verifier that passes saw
// exactly the honest table: the same canonical rows (Merkle leaves) and the
// same canonical payloads; witness reordering and every other change of a
// row fail.
func FuzzMutation(f *testing.F) {
	honest, err := os.ReadFile(filepath.Join(vectorDir, "private_base.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	trustFile := filepath.Join(vectorDir, "trust.json")
	trustData, err := os.ReadFile(trustFile)
	if err != nil {
		f.Fatal(err)
	}
	trust, err := ledger.ParseTrustDocument(trustData)
	if err != nil {
		f.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(honest), "\n"), "\n")
	remembered := rememberedCheckpoint(f)
	want := table(lines[1:])
	if want == nil {
		f.Fatal("the honest export does not decode")
	}
	for op := range byte(mutations) {
		f.Add([]byte{op, 5, 1, 2, 3})
		f.Add([]byte{op, 13, 0, 'x'})
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 2 {
			return
		}
		mutated := mutate(lines, in)
		mutated[0] = setMember(t, mutated[0], "checkpoint", nil) // a forger drops the export's own checkpoint
		got := table(mutated[1:])
		for _, cp := range []string{"", remembered} {
			for name, pass := range verifyBoth(t, mutated, trust, trustFile, cp) {
				switch {
				case !pass:
				case got == nil:
					t.Fatalf("%s passed an export whose rows do not decode (op %d)", name, in[0]%mutations)
				case cp == "" && !slices.Equal(got.hashes, want.hashes[:min(len(got.hashes), len(want.hashes))]):
					t.Fatalf("%s passed changed row hashes (op %d)", name, in[0]%mutations)
				case cp != "" && (!slices.Equal(got.leaves, want.leaves) || !slices.Equal(got.payloads, want.payloads)):
					t.Fatalf("%s passed a changed table against the remembered checkpoint (op %d)", name, in[0]%mutations)
				}
			}
		}
	})
}

// mutations is the number of mutation kinds mutate knows.
const mutations = 9

// mutate applies the mutation in[0] selects to a copy of lines (header
// first), at row in[1], with the rest of in as the new value's material.
func mutate(lines []string, in []byte) []string {
	out := slices.Clone(lines)
	rows := len(lines) - 1
	i := 1 + int(in[1])%rows
	j := 1 + int(in[1]/7+1)%rows
	value := string(in[2:])
	set := func(line, member string, v any) string {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			return line
		}
		m[member] = v
		b, _ := json.Marshal(m)
		return string(b)
	}
	get := func(line, member string) any {
		var m map[string]any
		json.Unmarshal([]byte(line), &m)
		return m[member]
	}
	switch in[0] % mutations {
	case 0: // the payload, behind its hash
		out[i] = set(out[i], "payload", map[string]any{"fuzz": value})
	case 1: // one header field of a row
		fields := []string{"index", "timestamp", "kind", "payload_hash", "prev_hash", "writer", "hash"}
		f := fields[len(value)%len(fields)]
		var v any = value
		if f == "index" {
			v = len(value)
		}
		out[i] = set(out[i], f, v)
	case 2: // a signature: flip one hex digit of the writer's
		sig, _ := get(out[i], "signature").(string)
		if len(sig) > 0 {
			k := len(value) % len(sig)
			flipped := []byte(sig)
			flipped[k] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", sig[k])+1)%16]
			out[i] = set(out[i], "signature", string(flipped))
		}
	case 3: // the witness list: drop, duplicate, reorder, or take another row's
		w, _ := get(out[i], "witnesses").([]any)
		switch len(value) % 4 {
		case 0:
			if len(w) > 0 {
				w = w[1:]
			}
		case 1:
			if len(w) > 0 {
				w = append(w, w[0])
			}
		case 2:
			slices.Reverse(w)
		case 3:
			w, _ = get(out[j], "witnesses").([]any)
		}
		out[i] = set(out[i], "witnesses", w)
	case 4: // row order
		out[i], out[j] = out[j], out[i]
	case 5: // row deletion
		out = slices.Delete(out, i, i+1)
	case 6: // row duplication
		out = slices.Insert(out, j, out[i])
	case 7: // the seam row (13) replaced by the row before it, re-linked
		seam := 1 + 13
		out[seam] = set(out[seam-1], "prev_hash", get(out[seam], "prev_hash"))
		out[seam] = set(out[seam], "index", 13)
	case 8: // the export header: information only
		out[0] = set(out[0], []string{"genesis_hash", "documented_seams", "keys"}[len(value)%3], []any{})
	}
	return out
}

// parsedTable is what the assertions compare.
type parsedTable struct {
	hashes   []ledger.Hash
	leaves   []string
	payloads []string
}

// table decodes rows (nil when one does not decode).
func table(rows []string) *parsedTable {
	var t parsedTable
	for _, line := range rows {
		b, err := ledger.DecodeBlock(stripPrivate(line))
		if err != nil {
			return nil
		}
		var priv struct {
			Payload json.RawMessage `json:"payload"`
		}
		json.Unmarshal([]byte(line), &priv)
		canon, _ := ledger.Canonicalize(priv.Payload)
		t.hashes = append(t.hashes, b.Hash())
		t.leaves = append(t.leaves, string(b.Leaf()))
		t.payloads = append(t.payloads, string(canon))
	}
	return &t
}

func stripPrivate(line string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return []byte(line)
	}
	delete(m, "description")
	delete(m, "payload")
	b, _ := json.Marshal(m)
	return b
}

// verifyBoth runs ledger.VerifyRows and verify-ledger on the export and
// reports which passed.
func verifyBoth(t *testing.T, lines []string, trust ledger.TrustDocument, trustFile, checkpoint string) map[string]bool {
	export := []byte(strings.Join(lines, "\n") + "\n")
	passed := map[string]bool{}
	if r, err := ledger.NewReader(bytes.NewReader(export)); err == nil {
		opts, err := r.Options(&trust)
		if err != nil {
			t.Fatal(err)
		}
		if checkpoint != "" {
			cp, err := ledger.ParseCheckpoint(checkpoint)
			if err != nil {
				t.Fatal(err)
			}
			opts.Checkpoint = &cp
		}
		res, err := ledger.VerifyRows(r.Rows(), opts)
		passed["ledger.VerifyRows"] = err == nil && res.Verdict.Pass()
	}
	args := []string{"--keys", trustFile}
	if checkpoint != "" {
		args = append(args, "--checkpoint", checkpoint)
	}
	var out, errOut bytes.Buffer
	passed["verify-ledger"] = run(append(args, "-"), bytes.NewReader(export), &out, &errOut) == 0
	return passed
}

func setMember(t *testing.T, line, member string, v any) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		delete(m, member)
	} else {
		m[member], _ = json.Marshal(v)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// rememberedCheckpoint is the checkpoint the vectors remember at the
// honest chain's full size.
func rememberedCheckpoint(t testing.TB) string {
	data, err := os.ReadFile(filepath.Join(vectorDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Name == "same_checkpoint" {
			return v.Args.Checkpoint
		}
	}
	t.Fatal("no same_checkpoint vector")
	return ""
}
