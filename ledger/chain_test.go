package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

var testEpoch = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

// testHistory returns n history rows; links maps an index to the earlier
// index it links to instead of index−1.
func testHistory(n int, links map[int64]int64) []HistoryRow {
	kinds := []string{"genesis", "node_registration", "key_ceremony", "gate_decision", "inter_node_exchange", "audit"}
	rows := make([]HistoryRow, n)
	for i := range rows {
		kind := kinds[1+i%(len(kinds)-1)]
		if i == 0 {
			kind = kinds[0]
		}
		rows[i] = HistoryRow{
			Index:       int64(i),
			Timestamp:   FormatTimestamp(testEpoch.Add(time.Duration(i) * time.Hour)),
			Kind:        kind,
			Description: fmt.Sprintf("test row %d", i),
			Payload:     []byte(fmt.Sprintf(`{"n":%d,"note":"row %d"}`, i, i)),
		}
		if p, ok := links[int64(i)]; ok {
			rows[i].PrevIndex = &p
		}
	}
	return rows
}

// pinSeams pins seams to the test chain's rows.
func pinSeams(t testing.TB, blocks []Block, seams ...Seam) []Seam {
	t.Helper()
	out, err := PinSeams(seams, blocks)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testChain(t testing.TB, s Signers, n int, links map[int64]int64) ([]Block, []Private) {
	t.Helper()
	blocks, privs, err := SealHistory(testHistory(n, links), s)
	if err != nil {
		t.Fatal(err)
	}
	return blocks, privs
}

func TestSealAndVerifyBlock(t *testing.T) {
	s := testSigners(t)
	keys := s.KeySet()
	blocks, _ := testChain(t, s, 3, nil)
	g := VerifyBlock(blocks[0], nil, keys, 0)
	if !g.Valid() || g.WitnessCount != 2 {
		t.Fatalf("genesis: %+v", g)
	}
	v := VerifyBlock(blocks[2], &blocks[1], keys, 0)
	if !v.Valid() || !v.HashValid || !v.SignatureValid || !v.ChainLinkValid || v.WitnessCount != 2 {
		t.Fatalf("block 2: %+v", v)
	}
	if v := VerifyBlock(blocks[2], &blocks[0], keys, 0); v.ChainLinkValid || !errors.Is(v.Err, ErrBrokenLink) {
		t.Fatalf("wrong prev accepted: %+v", v)
	}
	if v := VerifyBlock(blocks[1], nil, keys, 0); v.ChainLinkValid {
		t.Fatal("non-genesis accepted as genesis")
	}
	// Tampering with a header after sealing shows up as a hash mismatch
	// naming both hashes.
	b := blocks[1]
	b.header.Kind = "audit_forged"
	c := CheckBlock(b, keys, 0)
	var be *BlockError
	if c.HashValid || !errors.As(c.Err, &be) || !errors.Is(c.Err, ErrHashMismatch) || be.Got != blocks[1].Hash() || be.Want != b.header.Hash() {
		t.Fatalf("tampered block: %+v, err %v", c, c.Err)
	}
	// Keys that are not pinned verify nothing.
	if c := CheckBlock(blocks[1], KeySet{}, 0); c.SignatureValid || !errors.Is(c.Err, ErrUnknownKey) {
		t.Fatalf("unpinned keys: %+v", c)
	}
}

func TestSealRejects(t *testing.T) {
	s := testSigners(t)
	ok := Header{Index: 1, Timestamp: "2025-01-06T09:00:00Z", Kind: "audit", PrevHash: Hash{1}}
	tests := []struct {
		desc   string
		mutate func(*Header)
	}{
		{"negative index", func(h *Header) { h.Index = -1 }},
		{"index beyond 2^53-1", func(h *Header) { h.Index = maxSafeInteger + 1 }},
		{"local time zone", func(h *Header) { h.Timestamp = "2025-01-06T10:00:00+01:00" }},
		{"not RFC 3339", func(h *Header) { h.Timestamp = "06/01/2025" }},
		{"trailing zero fraction", func(h *Header) { h.Timestamp = "2025-01-06T09:00:00.500Z" }},
		{"upper-case kind", func(h *Header) { h.Kind = "Audit" }},
		{"empty kind", func(h *Header) { h.Kind = "" }},
		{"zero prev_hash after genesis", func(h *Header) { h.PrevHash = Hash{} }},
		{"genesis with prev_hash", func(h *Header) { h.Index = 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			h := ok
			tc.mutate(&h)
			if _, err := Seal(h, s); !errors.Is(err, ErrInvalidBlock) {
				t.Fatalf("Seal error = %v, want ErrInvalidBlock", err)
			}
		})
	}
	if _, err := Seal(ok, s); err != nil {
		t.Fatalf("valid header: %v", err)
	}
	if _, err := Seal(ok, Signers{}); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("no writer: %v", err)
	}
}

func TestVerifyWithDocumentedSeam(t *testing.T) {
	s := testSigners(t)
	blocks, _ := testChain(t, s, 200, map[int64]int64{153: 151})
	seams := pinSeams(t, blocks, Seam{Block: 153, Reason: "row 152 was superseded"})
	res, err := Verify(Values(blocks), Options{Keys: s.KeySet(), Genesis: blocks[0].Hash(), Seams: seams})
	if err != nil {
		t.Fatal(err)
	}
	v := res.Verdict
	if v.Verdict != VerdictPassWithSeam || v.Status != StatusOK || !v.CanonicalSpineValid || v.StrictTableValid || v.Valid ||
		v.StrictTableBreakAtBlock == nil || *v.StrictTableBreakAtBlock != 153 || v.Warning == nil ||
		!strings.Contains(*v.Warning, "block 153: row 152 was superseded") || !v.ValidDeprecated || v.ValidScope != "strict_table" {
		t.Fatalf("verdict: %+v", v)
	}
	if len(v.OffSpineRows) != 1 || v.OffSpineRows[0] != 152 || v.SpineLength != 199 || v.RowsChecked != 200 || v.Head.Index != 199 {
		t.Fatalf("spine: %+v", v)
	}
	// Without the seam documented, the same chain fails.
	res, _ = Verify(Values(blocks), Options{Keys: s.KeySet(), Genesis: blocks[0].Hash()})
	if res.Verdict.Verdict != VerdictUndocumentedBreak || res.Verdict.Pass() || !res.Verdict.CanonicalSpineValid {
		t.Fatalf("undocumented: %+v", res.Verdict)
	}
	// A linear chain passes outright.
	linear, _ := testChain(t, s, 10, nil)
	res, _ = Verify(Values(linear), Options{Keys: s.KeySet(), Genesis: linear[0].Hash(), Seams: seams})
	if res.Verdict.Verdict != VerdictPass || !res.Verdict.StrictTableValid || res.Verdict.Warning != nil || len(res.Table.UnusedSeams) != 1 {
		t.Fatalf("linear: %+v", res.Verdict)
	}
}

func TestVerifyEmptyAndGenesis(t *testing.T) {
	s := testSigners(t)
	res, err := Verify(Values(nil), Options{Keys: s.KeySet()})
	if err != nil || res.Verdict.Verdict != VerdictEmpty || res.Verdict.Pass() {
		t.Fatalf("empty: %+v %v", res.Verdict, err)
	}
	blocks, _ := testChain(t, s, 5, nil)
	res, _ = Verify(Values(blocks), Options{Keys: s.KeySet(), Genesis: Hash{7}})
	if res.Verdict.Verdict != VerdictGenesisMismatch || res.Verdict.CanonicalSpineValid {
		t.Fatalf("genesis: %+v", res.Verdict)
	}
	// A read error is an error, not a verdict.
	boom := errors.New("boom")
	_, err = Verify(func(yield func(Block, error) bool) { yield(Block{}, boom) }, Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}

func TestVerdictExtend(t *testing.T) {
	s := testSigners(t)
	blocks, _ := testChain(t, s, 12, map[int64]int64{5: 3})
	opts := Options{Keys: s.KeySet(), Genesis: blocks[0].Hash(), Seams: pinSeams(t, blocks, Seam{Block: 5, Reason: "r"})}
	res, _ := Verify(Values(blocks[:10]), opts)
	v := res.Verdict
	for i := 10; i < 12; i++ {
		head := blocks[i-1]
		var err error
		grown, _ := Verify(Values(blocks[:i+1]), opts)
		v, err = v.Extend(VerifyBlock(blocks[i], &head, opts.Keys, 0), *grown.Verdict.Checkpoint)
		if err != nil {
			t.Fatal(err)
		}
	}
	full, _ := Verify(Values(blocks), opts)
	want := full.Verdict
	if v.Verdict != want.Verdict || *v.Head != *want.Head || *v.Checkpoint != *want.Checkpoint || v.RowsChecked != want.RowsChecked ||
		v.SpineLength != want.SpineLength || v.AppendedSinceWalk != 2 {
		t.Fatalf("incremental %+v\nfull %+v", v, want)
	}
	// A block that does not follow the head is refused and changes nothing.
	head := blocks[11]
	if _, err := v.Extend(VerifyBlock(blocks[11], &head, opts.Keys, 0), *v.Checkpoint); !errors.Is(err, ErrBrokenLink) {
		t.Fatalf("replayed block: %v", err)
	}
}

func TestExportRoundTrip(t *testing.T) {
	s := testSigners(t)
	blocks, privs := testChain(t, s, 6, nil)
	for _, private := range []bool{false, true} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, ExportHeader{GenesisHash: blocks[0].Hash(), Keys: s.KeySet().Published(), Private: private})
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range blocks {
			if err := w.Write(Row{Block: b, Private: &privs[i]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if !private && strings.Contains(buf.String(), "test row") {
			t.Fatal("public export leaks a description")
		}
		r, err := NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if r.Keys().Len() != 3 || r.Header().GenesisHash != blocks[0].Hash() {
			t.Fatalf("header: %+v", r.Header())
		}
		for i := 0; ; i++ {
			row, err := r.Next()
			if errors.Is(err, io.EOF) {
				if i != len(blocks) {
					t.Fatalf("read %d rows", i)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := row.Block.MarshalJSON()
			want, _ := blocks[i].MarshalJSON()
			if !bytes.Equal(got, want) {
				t.Fatalf("row %d: %s != %s", i, got, want)
			}
			if private != (row.Private != nil) || (private && row.Private.Description != privs[i].Description) {
				t.Fatalf("row %d private part: %+v", i, row.Private)
			}
		}
	}
}

func TestReaderRejects(t *testing.T) {
	s := testSigners(t)
	blocks, _ := testChain(t, s, 2, nil)
	line, _ := blocks[1].MarshalJSON()
	hdr := `{"format":"proofsite-ledger-export/1","genesis_hash":"` + blocks[0].Hash().String() + `","keys":[],"documented_seams":[]}`
	tests := []struct {
		desc, text string
		want       error
	}{
		{"no header", ``, ErrInvalidExport},
		{"other format", strings.Replace(hdr, "export/1", "export/9", 1) + "\n", ErrInvalidExport},
		{"unknown header member", strings.Replace(hdr, `{`, `{"x":1,`, 1) + "\n", ErrInvalidExport},
		{"small-order key in header", strings.Replace(hdr, `"keys":[]`, `"keys":[{"key_id":"ed25519:1","public_key":"0100000000000000000000000000000000000000000000000000000000000000","role":"writer"}]`, 1), ErrSmallOrderKey},
		{"duplicate member", hdr + "\n" + strings.Replace(string(line), `{`, `{"kind":"audit",`, 1), ErrDuplicateKey},
		{"case-variant member", hdr + "\n" + strings.Replace(string(line), `"kind"`, `"KIND"`, 1), ErrInvalidBlock},
		{"unknown member", hdr + "\n" + strings.Replace(string(line), `{`, `{"extra":1,`, 1), ErrInvalidBlock},
		{"private member in a public export", hdr + "\n" + strings.Replace(string(line), `{`, `{"description":"x",`, 1), ErrInvalidBlock},
		{"null member", hdr + "\n" + strings.Replace(string(line), `"witnesses":[`, `"witnesses":null,"x":[`, 1), ErrInvalidBlock},
		{"upper-case hash", hdr + "\n" + strings.Replace(string(line), blocks[1].Hash().String(), strings.ToUpper(blocks[1].Hash().String()), 1), ErrInvalidBlock},
		{"blank line", hdr + "\n\n", ErrInvalidBlock},
		{"not an object", hdr + "\n[1]", ErrInvalidBlock},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.text))
			if err == nil {
				for _, err = range r.Blocks() {
					if err != nil {
						break
					}
				}
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzReader feeds arbitrary bytes to the export reader: it must never
// panic, and every block it accepts must re-encode to a line it accepts
// again with the same hash claims.
func FuzzReader(f *testing.F) {
	s := testSigners(f)
	blocks, privs := testChain(f, s, 3, nil)
	for _, private := range []bool{false, true} {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, ExportHeader{GenesisHash: blocks[0].Hash(), Keys: s.KeySet().Published(), Private: private})
		for i, b := range blocks {
			_ = w.Write(Row{Block: b, Private: &privs[i]})
		}
		_ = w.Flush()
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"format":"proofsite-ledger-export/1","genesis_hash":"00","keys":[],"documented_seams":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		var got []Block
		for b, err := range r.Blocks() {
			if err != nil {
				return
			}
			got = append(got, b)
		}
		for _, b := range got {
			line, err := b.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			again, err := DecodeBlock(line)
			if err != nil {
				t.Fatalf("re-decode %s: %v", line, err)
			}
			if again.Hash() != b.Hash() || again.Header() != b.Header() {
				t.Fatalf("round trip changed the block: %s", line)
			}
		}
		// The pure chain checks must cope with whatever the reader
		// accepts (signatures are left out: they are slow and not the
		// reader's business).
		rows := make([]BlockCheck, len(got))
		for i, b := range got {
			rows[i] = BlockCheck{Index: b.Index(), Hash: b.Hash(), PrevHash: b.PrevHash(), WellFormed: true, HashValid: b.Header().Hash() == b.Hash(), SignatureValid: true}
		}
		_ = NewVerdict(VerifySpine(rows, SpineOptions{Genesis: r.Header().GenesisHash}), VerifyStrictTable(rows, r.Header().DocumentedSeams), r.Header().DocumentedSeams)
	})
}

func TestNewTableRows(t *testing.T) {
	s := testSigners(t)
	blocks, _ := testChain(t, s, 8, map[int64]int64{5: 3})
	res, _ := Verify(Values(blocks), Options{Keys: s.KeySet(), Seams: pinSeams(t, blocks, Seam{Block: 5, Reason: "why"})})
	rows := NewTableRows(blocks[2:], 2, res.Verdict)
	if len(rows) != 6 || rows[2].Block.Index() != 4 || rows[2].OnSpine || !rows[3].OnSpine || rows[3].Break == nil || !rows[3].Break.Documented || rows[4].Break != nil {
		t.Fatalf("rows: %+v", rows)
	}
	data, err := json.Marshal(rows[3])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"index":5`, `"on_spine":true`, `"documented":true`, `"hash":"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %s", data, want)
		}
	}
	if strings.Contains(string(data), "description") || strings.Contains(string(data), "payload\"") {
		t.Errorf("table row leaks private members: %s", data)
	}
}

// FuzzHistory feeds arbitrary bytes to the history reader: no panic, and
// what it accepts has consecutive indexes and canonicalizable payloads.
func FuzzHistory(f *testing.F) {
	for _, r := range testHistory(3, map[int64]int64{2: 0}) {
		line, _ := json.Marshal(r)
		f.Add(line)
	}
	f.Add([]byte(`{"index":0,"timestamp":"2025-01-06T09:00:00Z","kind":"genesis","description":"","payload":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ReadHistory(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i, r := range rows {
			if r.Index != int64(i) || (r.PrevIndex != nil && *r.PrevIndex >= r.Index) {
				t.Fatalf("accepted row %d: %+v", i, r)
			}
			if _, _, err := PayloadHash(r.Payload); err != nil {
				t.Fatalf("accepted a payload that does not canonicalize: %s", r.Payload)
			}
		}
	})
}

// TestValidKind checks validKind against kindRule itself, at and around its
// length bound.
func TestValidKind(t *testing.T) {
	rule := regexp.MustCompile(kindRule)
	inputs := []string{"", "a", "A", "1a", "a b", "aé", "a.b-c_d9"}
	for n := range 70 {
		inputs = append(inputs, "a"+strings.Repeat("_", n), "a"+strings.Repeat("-", n)+"!")
	}
	for _, in := range inputs {
		if got, want := validKind(in), rule.MatchString(in); got != want {
			t.Errorf("validKind(%q) (%d bytes) = %v, want %v", in, len(in), got, want)
		}
	}
}
