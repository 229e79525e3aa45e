package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/proofsite/proofsite/cmd/sitebench/corpus"
)

// genDir is where the corpus goes inside the proofsite content folder; it
// publishes at corpus.LinkPrefix.
const genDir = "pages/gen"

// workspace is one generated site in both generators' formats, with the
// output folders the benchmark builds into. Every path is absolute, so the
// tools see the same paths whatever their working directory.
type workspace struct {
	pages []corpus.Page

	dir       string // work/n5000
	psContent string // the project's content plus pages/gen/
	psOut     string
	psData    string // the chain the explorer shows (initChain), never a developer's ./data
	hugoSite  string // config, layouts, content/gen/
	hugoOut   string
	caches    string // parent of Hugo's fresh cache folders
	old       string // earlier runs' output folders (clearOutput)
	cleared   int
}

// newWorkspace generates an n-page corpus from seed and writes it into a
// fresh copy of contentDir and a fresh Hugo site under work/n<N>.
func newWorkspace(work, contentDir string, seed uint64, n int) (*workspace, error) {
	dir, err := filepath.Abs(filepath.Join(work, fmt.Sprintf("n%d", n)))
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	ws := &workspace{
		pages:     corpus.Generate(seed, n),
		dir:       dir,
		psContent: filepath.Join(dir, "proofsite", "content"),
		psOut:     filepath.Join(dir, "proofsite", "public"),
		psData:    filepath.Join(dir, "proofsite", "data"),
		hugoSite:  filepath.Join(dir, "hugo", "site"),
		hugoOut:   filepath.Join(dir, "hugo", "public"),
		caches:    filepath.Join(dir, "hugo", "cache"),
		old:       filepath.Join(dir, "old"),
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if err := writeProofsiteSite(ws.psContent, contentDir, ws.pages); err != nil {
		return nil, fmt.Errorf("workspace: proofsite site: %w", err)
	}
	if err := writeHugoSite(ws.hugoSite, ws.pages); err != nil {
		return nil, fmt.Errorf("workspace: hugo site: %w", err)
	}
	for _, d := range []string{ws.caches, ws.old} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	return ws, nil
}

// initChain sets up the workspace's own chain from the content's history
// ("proofsite ledger init"), so that proofsite builds the explorer's pages
// (one per block) as a real site does.
func (ws *workspace) initChain(ctx context.Context, proofsite string) error {
	out, err := exec.CommandContext(ctx, proofsite, "ledger", "init", "--content", ws.psContent, "--data", ws.psData).CombinedOutput()
	if err != nil {
		return fmt.Errorf("workspace: proofsite ledger init: %w\n%s", err, out)
	}
	return nil
}

// clearOutput empties the way for a run into out by moving an earlier
// output there aside, into ws.old, which goes when the workspace does.
// Deleting it would bias the runs after it: ext4 skips inodes deleted in the
// last 30 seconds when it allocates new ones (recently_deleted), reading
// their inode table blocks, so after one 10,000-file output folder was
// deleted every file the next build created cost a scan (perf: 40% of a
// 1,000-page build's CPU time, growing with every run). A fresh clone's
// first build meets no such inodes; the benchmark measures that.
func (ws *workspace) clearOutput(out string) error {
	ws.cleared++
	err := os.Rename(out, filepath.Join(ws.old, fmt.Sprint(ws.cleared)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("workspace: move %s aside: %w", out, err)
	}
	return nil
}

// writeProofsiteSite copies the project's content folder to dst and adds the
// pages under pages/gen/.
func writeProofsiteSite(dst, contentDir string, pages []corpus.Page) error {
	info, err := os.Stat(contentDir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a folder", contentDir)
	}
	gen := filepath.Join(dst, filepath.FromSlash(genDir))
	if _, err := os.Stat(filepath.Join(contentDir, filepath.FromSlash(genDir))); err == nil {
		return errors.New(contentDir + "/" + genDir + " exists already; the corpus would mix with it")
	}
	if err := os.CopyFS(dst, os.DirFS(contentDir)); err != nil {
		return err
	}
	return corpus.Write(gen, pages)
}

// proofsitePage returns the source file of page name in the proofsite content.
func (ws *workspace) proofsitePage(name string) string {
	return filepath.Join(ws.psContent, filepath.FromSlash(genDir), name+".md")
}

// hugoPage returns the source file of page name in the Hugo site.
func (ws *workspace) hugoPage(name string) string {
	return filepath.Join(ws.hugoSite, "content", "gen", name+".md")
}
