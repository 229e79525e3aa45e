package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs one proofsite command line and returns its exit code and
// output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		desc string
		args []string
		want string
	}{
		{"no command", nil, "Usage: proofsite <command>"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"build", "--nope"}, "flag provided but not defined: -nope"},
		{"stray argument", []string{"build", "extra"}, `unexpected argument "extra"`},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("output %q does not contain %q", stdout+stderr, tc.want)
			}
		})
	}
}

func TestBuildCommand(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "content")
	if err := os.CopyFS(src, os.DirFS("../../site/testdata/site")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "public")

	code, stdout, stderr := runCLI(t, "build", "--content", src, "--out", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "pages,") || !strings.Contains(stdout, " ms ") {
		t.Errorf("no summary line: %q", stdout)
	}
	before, err := os.ReadFile(filepath.Join(out, "llms.txt"))
	if err != nil {
		t.Fatal(err)
	}

	// A content error: exit 1, file and line on stderr, output unchanged.
	os.WriteFile(filepath.Join(src, "pages", "hello.md"), []byte("---\ntitle: T\nsummary: S\ndate: 2026-01-01\nweight: heavy\n---\n"), 0o644)
	os.WriteFile(filepath.Join(src, "pages", "dup.md"), []byte("---\ntitle: T\nsummary: S\ndate: 2026-01-01\nslug: page-two\n---\n"), 0o644)
	code, _, stderr = runCLI(t, "build", "--content", src, "--out", out)
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	for _, want := range []string{
		filepath.ToSlash(src) + `/pages/hello.md:5: weight: expected a whole number, found "heavy"`,
		filepath.ToSlash(src) + "/pages/second.md:5: duplicate slug",
		"2 content errors; " + out + " was not changed",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, stderr)
		}
	}
	after, _ := os.ReadFile(filepath.Join(out, "llms.txt"))
	if !bytes.Equal(before, after) {
		t.Error("a failed build changed the output")
	}

	code, _, stderr = runCLI(t, "build", "--content", filepath.Join(dir, "missing"), "--out", out)
	if code != exitFailure || !strings.Contains(stderr, "content folder") {
		t.Errorf("missing content folder: exit %d, %q", code, stderr)
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	if code != exitOK || !strings.HasPrefix(stdout, "proofsite ") {
		t.Errorf("exit %d, %q", code, stdout)
	}
}
