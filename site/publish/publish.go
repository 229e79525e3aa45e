// Package publish is the only writer of a site's output directory.
//
// A full build is staged: files are written into a fresh folder beside the
// output directory, and Commit swaps the two at once, so readers see either
// the old site or the new one, and a failed build leaves the old one
// untouched. An incremental build is patched in place: each changed file is
// written to a temporary file and renamed over the old one, and files the
// site no longer produces are removed.
//
//	p, err := publish.New("public")
//	st, err := p.Stage()
//	err = st.Write("index.html", data) // from many goroutines
//	err = st.Commit()                  // or st.Abort()
//
// Both are atomic against a crash of the process; neither calls fsync, so
// after a power loss the file system decides what survived.
package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// keepFile is carried over from the old output into the new one: it keeps
// the empty output folder in version control.
const keepFile = ".gitkeep"

// ErrNotOutput is returned when the output directory holds files that do not
// look like a previous build, so replacing it could destroy someone's work.
var ErrNotOutput = errors.New("publish: refusing to replace a folder that is not a proofsite output")

// File is one output file.
type File struct {
	Path string // slash-separated, relative to the output directory
	Data []byte
}

// A Publisher owns an output directory. Its methods may not be called
// concurrently, but a Stage's Write may.
type Publisher struct {
	dir       string
	published map[string]bool // what the last Commit or Patch left in dir; nil before the first
	last      []string        // the path list of the last Patch
}

// New returns a Publisher for dir, which need not exist yet.
func New(dir string) (*Publisher, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	return &Publisher{dir: abs}, nil
}

// Dir returns the absolute output directory.
func (p *Publisher) Dir() string { return p.dir }

// A Stage is a full publication being written.
type Stage struct {
	p     *Publisher
	dir   string
	mu    sync.Mutex
	dirs  map[string]bool
	paths map[string]bool
}

// Stage starts a full publication in a new folder beside the output
// directory.
func (p *Publisher) Stage() (*Stage, error) {
	if err := checkReplaceable(p.dir); err != nil {
		return nil, err
	}
	parent := filepath.Dir(p.dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(p.dir)+".staging-")
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("publish: %w", err)
	}
	return &Stage{p: p, dir: tmp, dirs: map[string]bool{".": true}, paths: map[string]bool{}}, nil
}

// Write writes one file of the publication. It is safe for concurrent use.
func (s *Stage) Write(name string, data []byte) error {
	if err := s.reserve(name); err != nil {
		return err
	}
	if err := createFile(filepath.Join(s.dir, filepath.FromSlash(name)), data); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}

// reserve claims name for one file of the stage and makes its folder.
func (s *Stage) reserve(name string) error {
	if err := checkPath(name); err != nil {
		return err
	}
	dir := path.Dir(name)
	s.mu.Lock()
	if s.paths[name] {
		s.mu.Unlock()
		return fmt.Errorf("publish: %s written twice", name)
	}
	s.paths[name] = true
	made := s.dirs[dir]
	s.mu.Unlock()
	if !made {
		if err := os.MkdirAll(filepath.Join(s.dir, filepath.FromSlash(dir)), 0o755); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		s.mu.Lock()
		s.dirs[dir] = true
		s.mu.Unlock()
	}
	return nil
}

// Link publishes the existing file src at name: a hard link when src is on
// the same file system, else a copy. It is for large files the build does
// not produce itself and that are never changed in place (their writer
// replaces them by renaming), such as the ledger's tiles. It is safe for
// concurrent use.
func (s *Stage) Link(name, src string) error {
	if err := s.reserve(name); err != nil {
		return err
	}
	dst := filepath.Join(s.dir, filepath.FromSlash(name))
	if os.Link(src, dst) == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}

// Commit replaces the output directory with the stage.
func (s *Stage) Commit() error {
	if err := carryOver(s.p.dir, s.dir); err != nil {
		s.Abort()
		return err
	}
	if err := swap(s.dir, s.p.dir); err != nil {
		s.Abort()
		return fmt.Errorf("publish: %w", err)
	}
	// s.dir now holds the previous output.
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("publish: removing the previous output: %w", err)
	}
	s.p.published, s.p.last = s.paths, nil
	return nil
}

// Abort discards the stage; the output directory is untouched.
func (s *Stage) Abort() {
	os.RemoveAll(s.dir)
}

// Patch writes files in place, each atomically, and removes every file an
// earlier Commit or Patch published that is not in all, the complete list of
// the site's output paths. It returns the removed paths.
func (p *Publisher) Patch(files []File, all []string) (removed []string, err error) {
	if p.published == nil {
		return nil, errors.New("publish: Patch needs a full publication first")
	}
	for _, f := range files {
		if err := checkPath(f.Path); err != nil {
			return nil, err
		}
		if err := writeAtomic(filepath.Join(p.dir, filepath.FromSlash(f.Path)), f.Data); err != nil {
			return nil, err
		}
	}
	if slices.Equal(all, p.last) {
		return nil, nil // the same files as last time: nothing became stale
	}
	now := make(map[string]bool, len(all))
	for _, a := range all {
		now[a] = true
	}
	var stale []string
	for old := range p.published {
		if !now[old] {
			stale = append(stale, old)
		}
	}
	slices.Sort(stale)
	for _, old := range slices.Backward(stale) {
		full := filepath.Join(p.dir, filepath.FromSlash(old))
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("publish: %w", err)
		}
		removeEmptyParents(p.dir, filepath.Dir(full))
	}
	p.published, p.last = now, all
	return stale, nil
}

// writeAtomic writes data to a temporary file beside name and renames it over
// name.
func writeAtomic(name string, data []byte) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-")
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("publish: %w", err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}

func removeEmptyParents(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if os.Remove(dir) != nil { // not empty, or gone
			return
		}
		dir = filepath.Dir(dir)
	}
}

func checkPath(name string) error {
	if !filepath.IsLocal(filepath.FromSlash(name)) || path.Clean(name) != name {
		return fmt.Errorf("publish: output path %q is not a clean relative path", name)
	}
	return nil
}

// checkReplaceable refuses to replace a folder that holds something other
// than an earlier build: an earlier build has an llms.txt at its top, and an
// empty output folder may hold only the .gitkeep placeholder.
func checkReplaceable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() == "llms.txt" {
			return nil
		}
		if e.Name() != keepFile {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s holds %s; remove it or choose another output folder", ErrNotOutput, dir, strings.Join(names[:min(3, len(names))], ", "))
}

// carryOver copies the .gitkeep placeholder from the old output, if any.
func carryOver(oldDir, newDir string) error {
	data, err := os.ReadFile(filepath.Join(oldDir, keepFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if err := os.WriteFile(filepath.Join(newDir, keepFile), data, 0o644); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}
