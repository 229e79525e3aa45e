package publish

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func publishAll(t *testing.T, p *Publisher, fs map[string]string) {
	t.Helper()
	st, err := p.Stage()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range fs {
		if err := st.Write(name, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestStageReplacesOutput(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "public")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, ".gitkeep"), nil, 0o644)
	p, _ := New(out)
	publishAll(t, p, map[string]string{"llms.txt": "1", "a/b/c.html": "c", "old.html": "old"})
	publishAll(t, p, map[string]string{"llms.txt": "2", "a/d.html": "d"})
	got := files(t, out)
	want := map[string]string{".gitkeep": "", "llms.txt": "2", "a/d.html": "d"}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 1 {
		t.Errorf("left beside the output: %v", entries)
	}
}

func TestStageRefusesForeignFolder(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "thesis.tex"), []byte("years of work"), 0o644)
	p, _ := New(out)
	if _, err := p.Stage(); !errors.Is(err, ErrNotOutput) {
		t.Fatalf("got %v, want ErrNotOutput", err)
	}
	if got := files(t, out); got["thesis.tex"] != "years of work" {
		t.Error("foreign file touched")
	}
}

func TestAbortLeavesOutput(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "public")
	p, _ := New(out)
	publishAll(t, p, map[string]string{"llms.txt": "1"})
	st, err := p.Stage()
	if err != nil {
		t.Fatal(err)
	}
	st.Write("llms.txt", []byte("2"))
	st.Abort()
	if got := files(t, out); got["llms.txt"] != "1" {
		t.Errorf("output changed by an aborted stage: %v", got)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("left beside the output: %v", entries)
	}
}

func TestWriteRejectsEscapingPaths(t *testing.T) {
	p, _ := New(filepath.Join(t.TempDir(), "public"))
	st, err := p.Stage()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../x", "", "a//b"} {
		if err := st.Write(bad, nil); err == nil {
			t.Errorf("Write(%q) accepted", bad)
		}
	}
	if err := st.Write("a", nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Write("a", nil); err == nil {
		t.Error("second write of the same path accepted")
	}
}

func TestPatch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	p, _ := New(out)
	if _, err := p.Patch(nil, nil); err == nil {
		t.Error("Patch before a full publication accepted")
	}
	publishAll(t, p, map[string]string{"llms.txt": "1", "keep.html": "k", "gone/deep/x.html": "x"})
	removed, err := p.Patch([]File{{Path: "llms.txt", Data: []byte("2")}, {Path: "new/n.html", Data: []byte("n")}},
		[]string{"llms.txt", "keep.html", "new/n.html"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{"gone/deep/x.html"}) {
		t.Errorf("removed %v", removed)
	}
	got := files(t, out)
	want := map[string]string{"llms.txt": "2", "keep.html": "k", "new/n.html": "n"}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Error("emptied folder gone/ not removed")
	}
	names := []string{}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"keep.html", "llms.txt", "new"}) {
		t.Errorf("top level after patch: %v (temporary files left?)", names)
	}
}
