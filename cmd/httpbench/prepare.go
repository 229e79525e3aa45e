package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pageSize is the size of the static page both servers serve.
const pageSize = 10 << 10

// pagePath is the static page's URL path, and its path inside the site.
const pagePath = "/bench/page-10k.html"

// workMarker marks a folder as this program's, so emptying it is safe.
const workMarker = ".httpbench"

// workDirs are the folders of one run inside --work.
type workDirs struct {
	root   string
	data   string // proofsite data dir: keys and the Badger ledger
	chat   string // the chat edge's data dir (a Badger folder is one process's)
	public string // the built site both servers serve
	nginx  string // nginx prefix: config, pid, error log, temp paths
	logs   string // output of every process started
}

// newWorkDirs empties root (only if an earlier run made it) and lays out a
// fresh run in it.
func newWorkDirs(root string) (workDirs, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return workDirs{}, err
	}
	if _, err := os.Stat(root); err == nil {
		if _, err := os.Stat(filepath.Join(root, workMarker)); err != nil {
			return workDirs{}, fmt.Errorf("%s exists and was not made by httpbench; choose another --work", root)
		}
		if err := os.RemoveAll(root); err != nil {
			return workDirs{}, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return workDirs{}, err
	}
	w := workDirs{
		// The site's name starts with "_" so that the go command skips the
		// Go source a build publishes (downloads/verify-ledger.go): the
		// work folder is inside the module.
		root: root, data: filepath.Join(root, "data"), chat: filepath.Join(root, "chat-data"), public: filepath.Join(root, "_site"),
		nginx: filepath.Join(root, "nginx"), logs: filepath.Join(root, "logs"),
	}
	for _, d := range []string{root, w.nginx, w.logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return workDirs{}, err
		}
	}
	return w, os.WriteFile(filepath.Join(root, workMarker), nil, 0o644)
}

// prepare initialises a ledger (and one for the chat edge), builds the site and writes the static page
// into it, in that order: a build replaces the output folder.
func prepare(ctx context.Context, cfg config, w workDirs) error {
	steps := []struct {
		stage string
		args  []string
	}{
		{"ledger init", []string{"ledger", "init", "--data", w.data, "--content", cfg.content}},
		{"ledger init chat", []string{"ledger", "init", "--data", w.chat, "--content", cfg.content}},
		{"build", []string{"build", "--data", w.data, "--content", cfg.content, "--out", w.public}},
	}
	for _, s := range steps {
		logPath := filepath.Join(w.logs, strings.ReplaceAll(s.stage, " ", "-")+".log")
		out, err := exec.CommandContext(ctx, cfg.bin, s.args...).CombinedOutput()
		if werr := os.WriteFile(logPath, out, 0o644); werr != nil {
			return werr
		}
		if err != nil {
			return fmt.Errorf("prepare: %s: %w; see %s", s.stage, err, logPath)
		}
	}
	page := filepath.Join(w.public, filepath.FromSlash(pagePath))
	if err := os.MkdirAll(filepath.Dir(page), 0o755); err != nil {
		return fmt.Errorf("prepare: static page: %w", err)
	}
	if err := os.WriteFile(page, staticPage(), 0o644); err != nil {
		return fmt.Errorf("prepare: static page: %w", err)
	}
	return nil
}

// staticPage returns exactly pageSize bytes of plausible HTML: a head, a
// stylesheet link, headings and paragraphs, padded to size with a comment.
func staticPage() []byte {
	const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Benchmark page · proofsite</title>
<link rel="stylesheet" href="/assets/site.css">
</head>
<body>
<main>
<h1>A ten kilobyte page</h1>
`
	const tail = "</main>\n</body>\n</html>\n"
	const comment = "<!--" + "-->\n"
	var b bytes.Buffer
	b.WriteString(head)
	for i := 1; ; i++ {
		section := fmt.Sprintf("<h2 id=\"s%d\">Section %d</h2>\n<p>Every block in the ledger is signed by its writer and witnessed; "+
			"the canonical spine runs from the head back to the pinned genesis block, and anyone can recompute it "+
			"from the public rows with the standalone verifier (section %d).</p>\n", i, i, i)
		if b.Len()+len(section)+len(comment)+len(tail) > pageSize {
			break
		}
		b.WriteString(section)
	}
	pad := pageSize - b.Len() - len(comment) - len(tail)
	b.WriteString("<!--" + strings.Repeat(" ", pad) + "-->\n")
	b.WriteString(tail)
	return b.Bytes()
}
