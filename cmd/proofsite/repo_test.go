package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoCommandIgnoresPublic: the build publishes Go source
// (public/downloads/verify-ledger.go); go.mod's ignore directive keeps it
// out of ./..., so go vet, staticcheck and go test never see it. The file
// is laid over the tree with -overlay, so nothing is written into public/.
func TestGoCommandIgnoresPublic(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	published := filepath.Join(root, "public", "downloads", "verify-ledger.go")
	overlay := filepath.Join(t.TempDir(), "overlay.json")
	data, _ := json.Marshal(map[string]any{"Replace": map[string]string{published: filepath.Join(root, "cmd", "verify-ledger", "main.go")}})
	if err := os.WriteFile(overlay, data, 0o644); err != nil {
		t.Fatal(err)
	}
	list := func(pattern string) string {
		cmd := exec.Command("go", "list", "-e", "-overlay", overlay, pattern)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pattern, err, out)
		}
		return string(out)
	}
	// The overlay works: named directly, the published file is a package.
	if out := list("./public/downloads"); !strings.Contains(out, "/public/downloads") {
		t.Fatalf("the overlay did not apply:\n%s", out)
	}
	if out := list("./..."); strings.Contains(out, "/public") {
		t.Errorf("./... includes the build output:\n%s", out)
	}
}

// TestMakeCleanKeepsData: make clean removes build outputs, never the chain
// and its private keys.
func TestMakeCleanKeepsData(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not installed; make test needs it anyway")
	}
	out, err := exec.Command("make", "-s", "-n", "-C", "../..", "clean").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n clean: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "public/") || regexp.MustCompile(`\bdata\b`).Match(out) {
		t.Errorf("make clean runs:\n%s", out)
	}
}

// TestReadmeStaysInRepository: a fresh clone has only the repository, so
// README links nothing outside it.
func TestReadmeStaysInRepository(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\]\(([^)]+)\)|`+"`"+`(\.\./[^`+"`"+`]*)`+"`").FindAllStringSubmatch(string(readme), -1) {
		target := m[1] + m[2]
		if strings.HasPrefix(target, "http") || strings.HasPrefix(target, "#") {
			continue
		}
		if strings.HasPrefix(target, "../") {
			t.Errorf("README points outside the repository: %s", target)
			continue
		}
		if _, err := os.Stat(filepath.Join("../..", target)); err != nil {
			t.Errorf("README links %s, which is not in the repository", target)
		}
	}
}

// TestNoBinariesTracked: compiled programs never enter git (.gitignore
// lists the usual outputs; this catches the rest).
func TestNoBinariesTracked(t *testing.T) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v (the repository's tests run in a git checkout)", err)
	}
	magic := [][]byte{{0x7f, 'E', 'L', 'F'}, {0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf}, {'M', 'Z'}}
	for name := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		f, err := os.Open(filepath.Join("../..", name))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		head := make([]byte, 4)
		n, _ := f.Read(head)
		f.Close()
		for _, m := range magic {
			if n >= len(m) && string(head[:len(m)]) == string(m) {
				t.Errorf("%s is a compiled program; remove it from git", name)
			}
		}
	}
}
