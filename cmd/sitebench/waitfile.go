package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// How the incremental phase looks at an output file: on every fsnotify event
// in its folder, and on a fine poll so that a late or lost event (a folder
// replaced by a full rebuild, a rename the watch did not follow) cannot hide
// or delay the result by more than pollInterval. The poll only stats the file
// and reads it when something changed; every forceEvery polls it reads it
// anyway, in case a rewrite kept the size and the coarse mtime.
const (
	pollInterval = time.Millisecond
	forceEvery   = 50
)

// Errors of outputWatch.wait.
var (
	errEditTimeout = errors.New("edit did not reach the output in time")
	errExited      = errors.New("the process exited")
)

// outputWatch waits for one output file to hold an edit. It must be created
// before the edit is written, so that no event is missed.
type outputWatch struct {
	path string
	w    *fsnotify.Watcher // nil when the folder could not be watched: polling only
}

// newOutputWatch starts watching path's folder.
func newOutputWatch(path string) *outputWatch {
	ow := &outputWatch{path: path}
	if w, err := fsnotify.NewWatcher(); err == nil {
		if err := w.Add(filepath.Dir(path)); err == nil {
			ow.w = w
		} else {
			w.Close()
		}
	}
	return ow
}

// Close stops watching.
func (ow *outputWatch) Close() {
	if ow.w != nil {
		ow.w.Close()
	}
}

// wait returns the moment the file was first seen complete and holding
// marker (see holdsEdit). It gives up at deadline, when exited is closed, or
// when ctx ends.
func (ow *outputWatch) wait(ctx context.Context, marker string, deadline time.Time, exited <-chan struct{}) (time.Time, error) {
	var (
		events <-chan fsnotify.Event
		errs   <-chan error
	)
	if ow.w != nil {
		events, errs = ow.w.Events, ow.w.Errors
	}
	poll := time.NewTicker(pollInterval)
	defer poll.Stop()
	timeout := time.NewTimer(time.Until(deadline))
	defer timeout.Stop()

	var (
		last  os.FileInfo
		polls int
		want  = []byte(marker)
	)
	// check reads the file when forced or when its stat changed.
	check := func(force bool) bool {
		fi, err := os.Stat(ow.path)
		if err != nil {
			return false
		}
		unchanged := last != nil && os.SameFile(last, fi) && fi.Size() == last.Size() && fi.ModTime().Equal(last.ModTime())
		if unchanged && !force {
			return false
		}
		last = fi
		data, err := os.ReadFile(ow.path)
		return err == nil && holdsEdit(data, want)
	}

	if check(true) {
		return time.Now(), nil
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if check(ev.Name == ow.path) {
				return time.Now(), nil
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
			// An overflow or watch error: the poll carries on.
		case <-poll.C:
			polls++
			if check(polls%forceEvery == 0) {
				return time.Now(), nil
			}
		case <-timeout.C:
			return time.Time{}, fmt.Errorf("%w: %s has no %q", errEditTimeout, ow.path, marker)
		case <-exited:
			return time.Time{}, errExited
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

var htmlEnd = []byte("</html>")

// holdsEdit reports whether data is a complete HTML page holding marker. A
// file written in place is truncated and then written from the start, so a
// read that ends with the closing tag and holds the marker has seen the whole
// new file; a half-written one fails one of the two tests.
func holdsEdit(data, marker []byte) bool {
	return bytes.HasSuffix(bytes.TrimRight(data, " \t\r\n"), htmlEnd) && bytes.Contains(data, marker)
}
