package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/render"
)

// BenchmarkBuildLarge is a full in-process build of the project's content
// plus 5,000 generated pages: what "proofsite build" does, without the
// process around it. It exists to be profiled:
//
//	go test -run '^$' -bench BuildLarge -benchtime 3x -cpuprofile cpu.out ./cmd/sitebench
//	go tool pprof -top -cum cpu.out
//
// Generating the corpus is not timed. Wall times of the real binary against
// Hugo come from "make bench", not from here.
func BenchmarkBuildLarge(b *testing.B) {
	ws, err := newWorkspace(b.TempDir(), projectContent, 1, 5000)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		res, err := buildInProcess(ctx, ws)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Files), "files/op")
	}
}

// BenchmarkRebuildLarge is the incremental rebuild "proofsite watch" makes
// after one page's body is saved, in the same 5,000-page site: the page's
// file is rewritten (not timed) and Build is called with its path, with and
// without the chain explorer (the project's history sealed with fresh keys,
// one page per block). Profile it the same way:
//
//	go test -run '^$' -bench RebuildLarge -benchtime 200x -cpuprofile cpu.out ./cmd/sitebench
func BenchmarkRebuildLarge(b *testing.B) {
	for _, explorer := range []bool{false, true} {
		b.Run(fmt.Sprintf("explorer=%v", explorer), func(b *testing.B) {
			ws, err := newWorkspace(b.TempDir(), projectContent, 1, 5000)
			if err != nil {
				b.Fatal(err)
			}
			opts := site.Options{ContentDir: ws.psContent, OutDir: ws.psOut, Incremental: true}
			if explorer {
				opts.Render.Ledger = projectLedger(b)
			}
			rebuildLoop(b, ws, opts)
		})
	}
}

func rebuildLoop(b *testing.B, ws *workspace, opts site.Options) {
	ctx := context.Background()
	builder, err := site.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := builder.Build(ctx, nil); err != nil {
		b.Fatal(err)
	}
	k := 0
	for b.Loop() {
		b.StopTimer()
		p := ws.pages[(k*7919+41)%len(ws.pages)]
		k++
		if err := os.WriteFile(ws.proofsitePage(p.Name), p.WithMarker(fmt.Sprintf("bench-%d", k)).File(), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := builder.Build(ctx, []string{genDir + "/" + p.Name + ".md"})
		if err != nil {
			b.Fatal(err)
		}
		if res.Full || res.Rendered != 1 {
			b.Fatalf("rebuild of one page: full %v, rendered %d jobs", res.Full, res.Rendered)
		}
	}
}

// projectLedger seals the project's history with fresh keys and verifies
// it with the charter's seams pinned, as "ledger init" and the build do.
func projectLedger(b *testing.B) *render.Ledger {
	ch, err := content.LoadCharter(os.DirFS(projectContent))
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(filepath.Join(projectContent, "ledger", "history.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rows, err := ledger.ReadHistory(f)
	if err != nil {
		b.Fatal(err)
	}
	var signers ledger.Signers
	for i := range 3 {
		k, err := ledger.GenerateKey(rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			signers.Writer = k
		} else {
			signers.Witnesses = append(signers.Witnesses, k)
		}
	}
	blocks, _, err := ledger.SealHistory(rows, signers)
	if err != nil {
		b.Fatal(err)
	}
	seams, err := ledger.PinSeams(ch.Ledger.Seams(), blocks)
	if err != nil {
		b.Fatal(err)
	}
	pins := ledger.Options{Keys: signers.KeySet(), Genesis: blocks[0].Hash(), Seams: seams, WitnessQuorum: ch.Ledger.Quorum()}
	res, checks, err := ledger.VerifyBlocks(blocks, pins)
	if err != nil {
		b.Fatal(err)
	}
	return &render.Ledger{Blocks: blocks, Checks: checks, Pins: pins, Result: res}
}
