package main

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
)

// buildTool is one generator of the full-build phase.
type buildTool struct {
	name string
	out  string // output folder, moved aside before every run (clearOutput)
	// command returns the build's command line; cache is a fresh, empty
	// folder the tool may use as its cache.
	command func(ctx context.Context, cache string) *exec.Cmd
}

// fullResult is the full-build phase of one corpus size.
type fullResult struct {
	Pages   int                 // generated pages
	Tools   []string            // tool names in run order
	Samples map[string][]sample // measured runs per tool, warm-up excluded
	Files   map[string]int      // files in each tool's output
}

func buildTools(cfg config, ws *workspace) []buildTool {
	return []buildTool{
		{name: "proofsite", out: ws.psOut, command: func(ctx context.Context, _ string) *exec.Cmd {
			return exec.CommandContext(ctx, cfg.proofsite, "build", "--content", ws.psContent, "--out", ws.psOut, "--data", ws.psData)
		}},
		{name: "hugo", out: ws.hugoOut, command: func(ctx context.Context, cache string) *exec.Cmd {
			return exec.CommandContext(ctx, cfg.hugo, "--quiet", "-s", ws.hugoSite, "-d", ws.hugoOut, "--cacheDir", cache)
		}},
	}
}

// fullBuilds measures full builds of ws by every tool: one warm-up each,
// then cfg.runs rounds, the tools interleaved within each round.
func fullBuilds(ctx context.Context, cfg config, ws *workspace, log *slog.Logger) (fullResult, error) {
	tools := buildTools(cfg, ws)
	res := fullResult{Pages: len(ws.pages), Samples: map[string][]sample{}, Files: map[string]int{}}
	for _, t := range tools {
		res.Tools = append(res.Tools, t.name)
	}
	for round := 0; round <= cfg.runs; round++ {
		for _, t := range tools {
			s, err := fullBuild(ctx, ws, t)
			if err != nil {
				return res, err
			}
			warmup := round == 0
			log.Info("full build", "pages", res.Pages, "tool", t.name, "warmup", warmup,
				"wall_ms", s.Wall.Milliseconds(), "cpu_ms", s.CPU.Milliseconds(), "maxrss_kib", s.MaxRSS)
			if warmup {
				// Check once that the build produced the generated pages.
				if _, err := findPageOutput(t.out, ws.pages[len(ws.pages)-1].Name); err != nil {
					return res, fmt.Errorf("%s: %w", t.name, err)
				}
				continue
			}
			res.Samples[t.name] = append(res.Samples[t.name], s)
		}
	}
	for _, t := range tools {
		n, err := countFiles(t.out)
		if err != nil {
			return res, err
		}
		res.Files[t.name] = n
	}
	return res, nil
}

// fullBuild runs one full build from an empty output folder and a fresh
// cache folder, on settled file systems.
func fullBuild(ctx context.Context, ws *workspace, t buildTool) (sample, error) {
	if err := ws.clearOutput(t.out); err != nil {
		return sample{}, err
	}
	cache, err := os.MkdirTemp(ws.caches, t.name+"-")
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(cache)
	settle()
	return measure(t.command(ctx, cache))
}

// countFiles counts the regular files under dir.
func countFiles(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	return n, err
}
