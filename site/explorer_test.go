package site_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/render"
)

// seamRow is the row of the test ledger that links over the row before
// it: row 4 links to row 2, so row 3 is off the spine.
const seamRow = 4

// testLedger seals a six-row chain with fixed keys, row 4 linking to row 2,
// and verifies it as cmd does. With documented, a seam pinned to row 4's
// hashes documents the break; without, the seam at row 4 pins another
// row's hash, so it documents nothing and the verdict fails.
func testLedger(t testing.TB, documented bool) *render.Ledger {
	t.Helper()
	l, err := sealTestLedger(documented)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func sealTestLedger(documented bool) (*render.Ledger, error) {
	var signers ledger.Signers
	for seed := byte(1); seed <= 3; seed++ {
		k, err := ledger.NewPrivateKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
		if err != nil {
			return nil, err
		}
		if seed == 1 {
			signers.Writer = k
		} else {
			signers.Witnesses = append(signers.Witnesses, k)
		}
	}
	var rows []ledger.HistoryRow
	for i := range int64(6) {
		r := ledger.HistoryRow{Index: i, Timestamp: fmt.Sprintf("2026-01-0%dT10:00:00Z", i+1), Kind: "note",
			Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
		if i == seamRow {
			prev := int64(seamRow - 2)
			r.PrevIndex, r.Kind = &prev, "migration_complete"
		}
		rows = append(rows, r)
	}
	blocks, _, err := ledger.SealHistory(rows, signers)
	if err != nil {
		return nil, err
	}
	seams := []ledger.Seam{{Block: seamRow, Reason: "A storage migration superseded row 3."}}
	if seams, err = ledger.PinSeams(seams, blocks); err != nil {
		return nil, err
	}
	if !documented {
		seams[0].Hash = blocks[seamRow+1].Hash()
	}
	trust, err := ledger.NewTrustDocument(signers, nil, blocks[0].Hash(), seams, 2, "proof.fixture.example/ledger")
	if err != nil {
		return nil, err
	}
	pins, err := trust.Options()
	if err != nil {
		return nil, err
	}
	res, checks, err := ledger.VerifyBlocks(blocks, pins)
	if err != nil {
		return nil, err
	}
	return &render.Ledger{Blocks: blocks, Checks: checks, Pins: pins, Result: res}, nil
}

// TestExplorer builds the fixture with a chain whose seam is documented,
// with one whose seam is not, and with none: the explorer says what the build
// verified, and never more; the home page links to it and never shows the
// build's verdict (the browser computes its own from the tiles).
func TestExplorer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ledger *render.Ledger
		want   map[string][]string // file -> texts it must hold
		lacks  map[string][]string // file -> texts it must not hold
		absent []string            // files the build must not write
	}{{
		name:   "documented seam",
		ledger: testLedger(t, true),
		want: map[string][]string{
			"index.html":            {`href="/explorer/"`},
			"explorer/index.html":   {"PASS_WITH_DOCUMENTED_STRICT_SEAM", "<svg", "Row 4 links to row 2", "Row 3 stays published off the canonical spine", "documented seam", "A storage migration superseded row 3."},
			"explorer/block/4.html": {"Documented seam", `href="/explorer/block/2.html"`, "Hash recomputes</dt><dd>yes", "yes: 2 of the 2 needed"},
			"explorer/block/3.html": {"On the canonical spine</dt><dd>no"},
			"explorer/block/2.html": {"Linked from (spine)</dt><dd><a href=\"/explorer/block/4.html\">"},
			"explorer/block/5.md":   {"# Block 5", "- hash: `"},
			"sitemap.xml":           {"https://proof.fixture.example/explorer/block/5.html"},
			"explorer/block/0.md":   {"none (genesis)"},
		},
		lacks: map[string][]string{"index.html": {"PASS_WITH_DOCUMENTED_STRICT_SEAM"}, "index.md": {"PASS_WITH_DOCUMENTED_STRICT_SEAM"}},
	}, {
		name:   "undocumented break",
		ledger: testLedger(t, false),
		want: map[string][]string{
			"explorer/index.html":   {"FAIL", `class="status failed"`},
			"explorer/block/4.html": {"Undocumented strict-table break"},
		},
		lacks: map[string][]string{"index.html": {`class="status failed"`}},
	}, {
		name: "no chain",
		want: map[string][]string{
			"explorer/index.html": {"This build read no chain", "/api/ledger/strict-table"},
		},
		absent: []string{"explorer/block/0.html"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "public")
			opts := testRenderOptions()
			opts.Ledger = tc.ledger
			b, err := site.New(site.Options{ContentDir: fixtureDir, OutDir: out, Render: opts, Visibility: content.Visibility{Now: testNow}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Build(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
			for name, texts := range tc.want {
				data, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range texts {
					if !strings.Contains(string(data), s) {
						t.Errorf("%s lacks %q", name, s)
					}
				}
			}
			for name, texts := range tc.lacks {
				data, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range texts {
					if strings.Contains(string(data), s) {
						t.Errorf("%s holds %q", name, s)
					}
				}
			}
			for _, name := range tc.absent {
				if _, err := os.Stat(filepath.Join(out, name)); err == nil {
					t.Errorf("%s was written", name)
				}
			}
		})
	}
}
