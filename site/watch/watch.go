// Package watch reports changes under a folder in batches. It knows nothing
// about pages: it turns fsnotify events into sorted lists of changed paths
// and leaves deciding what to rebuild to its caller.
//
//	w, err := watch.New("content", watch.Options{Ignore: content.Ignored})
//	go w.Run(ctx)
//	for batch := range w.Batches() { builder.Build(ctx, batch) }
//
// Folders are watched recursively, including folders created later (their
// files are reported too). A batch is delivered once no event has arrived
// for Options.Debounce, or once the oldest change has waited MaxWait. While
// the caller is busy with one batch, new events gather into the next, so
// nothing is lost and a burst of saves becomes one rebuild.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Options configure a Watcher.
type Options struct {
	// Debounce is the quiet time after the last event before a batch is
	// delivered; 0 means 4 ms, long enough to join the writes of one save
	// (editors write, or write and rename, within a millisecond).
	Debounce time.Duration
	// MaxWait delivers a batch even while events keep arriving; 0 means
	// 250 ms.
	MaxWait time.Duration
	// Ignore reports paths (slash-separated, relative to the root) that are
	// never reported; ignored folders are not watched.
	Ignore func(rel string) bool
	// Logger receives watch errors; nil discards.
	Logger *slog.Logger
}

// A Watcher watches one folder tree.
type Watcher struct {
	root    string
	opts    Options
	fsw     *fsnotify.Watcher
	batches chan []string
	log     *slog.Logger
}

// New starts watching root and every folder under it.
func New(root string, opts Options) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = 4 * time.Millisecond
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = 250 * time.Millisecond
	}
	if opts.Ignore == nil {
		opts.Ignore = func(string) bool { return false }
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{root: abs, opts: opts, fsw: fsw, batches: make(chan []string), log: log}
	if _, err := w.addTree(abs); err != nil {
		fsw.Close()
		return nil, err
	}
	return w, nil
}

// Batches delivers the changed paths, slash-separated and relative to the
// root, sorted and without duplicates. It is closed when Run returns.
func (w *Watcher) Batches() <-chan []string { return w.batches }

// Run watches until ctx is done or the watch fails, then closes Batches and
// stops watching.
func (w *Watcher) Run(ctx context.Context) error {
	defer close(w.batches)
	defer w.fsw.Close()
	var (
		pending = map[string]bool{}
		since   time.Time        // when the oldest pending change arrived
		quiet   <-chan time.Time // fires Debounce after the last event
		send    chan<- []string  // non-nil while a batch waits for the caller
		batch   []string
	)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return errors.New("watch: event stream closed")
			}
			if !w.collect(ev, pending) {
				continue
			}
			if since.IsZero() {
				since = time.Now()
			}
			send, batch = nil, nil
			if time.Since(since) >= w.opts.MaxWait {
				quiet = time.After(0)
			} else {
				quiet = time.After(w.opts.Debounce)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return errors.New("watch: error stream closed")
			}
			// An overflowed queue loses events: report the whole tree.
			w.log.Warn("watch error; rescanning", "err", err)
			pending["."] = true
			quiet = time.After(w.opts.Debounce)
		case <-quiet:
			quiet = nil
			if len(pending) > 0 {
				batch = slices.Sorted(maps.Keys(pending))
				send = w.batches
			}
		case send <- batch:
			clear(pending)
			send, batch, since = nil, nil, time.Time{}
		}
	}
}

// collect records what an event changed and reports whether it was news.
func (w *Watcher) collect(ev fsnotify.Event, pending map[string]bool) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	rel, ok := w.rel(ev.Name)
	if !ok || w.opts.Ignore(rel) {
		return false
	}
	pending[rel] = true
	if ev.Has(fsnotify.Create) {
		if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() {
			// A new folder: watch it, and report what was written into it
			// before the watch began.
			files, err := w.addTree(ev.Name)
			if err != nil {
				w.log.Warn("watch: cannot watch new folder", "path", rel, "err", err)
			}
			for _, f := range files {
				pending[f] = true
			}
		}
	}
	return true
}

// addTree watches dir and the folders under it, and returns the files it
// found.
func (w *Watcher) addTree(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked
			}
			return err
		}
		rel, ok := w.rel(p)
		if ok && rel != "." && w.opts.Ignore(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			files = append(files, rel)
			return nil
		}
		if err := w.fsw.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
	if err != nil {
		return files, fmt.Errorf("watch: %w", err)
	}
	return files, nil
}

func (w *Watcher) rel(name string) (string, bool) {
	rel, err := filepath.Rel(w.root, name)
	if err != nil || rel == ".." || filepath.IsAbs(rel) || len(rel) >= 3 && rel[:3] == ".."+string(filepath.Separator) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
