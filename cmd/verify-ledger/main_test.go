package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/proofsite/proofsite/cmd"
	"github.com/proofsite/proofsite/ledger"
)

// The verifier must build from the standard library alone, so an auditor
// can read every line that runs.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) != 1 || deps[0] != "github.com/proofsite/proofsite/cmd/verify-ledger" {
		t.Fatalf("verify-ledger depends on non-standard packages: %v", deps)
	}
	files, _ := filepath.Glob("*.go")
	var sources []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			sources = append(sources, f)
		}
	}
	if len(sources) != 1 || sources[0] != "main.go" {
		t.Fatalf("verify-ledger must be one file, found %v", sources)
	}
	src, _ := os.ReadFile("main.go")
	if !bytes.Equal(src, cmd.VerifyLedgerSource) {
		t.Fatal("cmd.VerifyLedgerSource is not main.go")
	}
}

type vector struct {
	Name string `json:"name"`
	File string `json:"file"`
	Args struct {
		Genesis    string `json:"genesis"`
		Keys       string `json:"keys"`
		Checkpoint string `json:"checkpoint"`
	} `json:"args"`
	Want struct {
		Error                   bool   `json:"error"`
		Verdict                 string `json:"verdict"`
		CanonicalSpineValid     bool   `json:"canonical_spine_valid"`
		StrictTableValid        bool   `json:"strict_table_valid"`
		StrictTableBreakAtBlock *int64 `json:"strict_table_break_at_block"`
		Warnings                int    `json:"warnings"`
	} `json:"want"`
}

const vectorDir = "../../ledger/testdata/vectors"

// TestVectors runs the shared tamper vectors: the same files and the same
// expected verdicts as the ledger package and proofsite ledger verify.
func TestVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vectorDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []vector
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			args := []string{"--json"}
			if v.Args.Genesis != "" {
				args = append(args, "--genesis", v.Args.Genesis)
			}
			if v.Args.Keys != "" {
				args = append(args, "--keys", filepath.Join(vectorDir, v.Args.Keys))
			}
			if v.Args.Checkpoint != "" {
				args = append(args, "--checkpoint", v.Args.Checkpoint)
			}
			args = append(args, filepath.Join(vectorDir, v.File))
			var stdout, stderr bytes.Buffer
			code := run(args, nil, &stdout, &stderr)
			var got struct {
				Verdict                 string   `json:"verdict"`
				CanonicalSpineValid     bool     `json:"canonical_spine_valid"`
				StrictTableValid        bool     `json:"strict_table_valid"`
				StrictTableBreakAtBlock *int64   `json:"strict_table_break_at_block"`
				Warnings                []string `json:"warnings"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("exit %d: %v\n%s%s", code, err, stdout.String(), stderr.String())
			}
			if v.Want.Error {
				if code != 1 || got.Verdict != "FAIL_UNREADABLE_EXPORT" {
					t.Fatalf("exit %d, output %s", code, stdout.String())
				}
				return
			}
			pass := v.Want.Verdict == ledger.VerdictPass || v.Want.Verdict == ledger.VerdictPassWithSeam
			if got.Verdict != v.Want.Verdict || got.CanonicalSpineValid != v.Want.CanonicalSpineValid || got.StrictTableValid != v.Want.StrictTableValid ||
				!sameBreak(got.StrictTableBreakAtBlock, v.Want.StrictTableBreakAtBlock) || (code == 0) != pass || len(got.Warnings) != v.Want.Warnings {
				t.Fatalf("exit %d, got %s", code, stdout.String())
			}
		})
	}
}

func sameBreak(a, b *int64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

func TestHumanOutputAndUsage(t *testing.T) {
	trust := filepath.Join(vectorDir, "trust.json")
	var out, errOut bytes.Buffer
	if code := run([]string{"--keys", trust, filepath.Join(vectorDir, "base.jsonl")}, nil, &out, &errOut); code != 0 ||
		!strings.HasPrefix(out.String(), "VERDICT PASS_WITH_DOCUMENTED_STRICT_SEAM\n") || !strings.Contains(out.String(), "documented seam at block 13") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	// The header's seam is not authority, but the output says how to pin it.
	out.Reset()
	code := run([]string{filepath.Join(vectorDir, "base.jsonl")}, nil, &out, &errOut)
	flagText := regexp.MustCompile(`--seam (13:[0-9a-f]{64}:[0-9a-f]{64})`).FindStringSubmatch(out.String())
	if code != 1 || !strings.HasPrefix(out.String(), "VERDICT FAIL_UNDOCUMENTED_STRICT_BREAK") || flagText == nil {
		t.Fatalf("unpinned seam: exit %d:\n%s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"--seam", flagText[1], filepath.Join(vectorDir, "base.jsonl")}, nil, &out, &errOut); code != 0 {
		t.Fatalf("seam pinned with the printed flag: exit %d:\n%s", code, out.String())
	}
	stdin, _ := os.ReadFile(filepath.Join(vectorDir, "spine_kind_changed.jsonl"))
	out.Reset()
	if code := run([]string{"--keys", trust, "-"}, bytes.NewReader(stdin), &out, &errOut); code != 1 || !strings.HasPrefix(out.String(), "VERDICT FAIL_CANONICAL_SPINE_BROKEN") {
		t.Fatalf("stdin: exit %d:\n%s", code, out.String())
	}
	// Quorum from the flag: 3 witnesses are more than any block carries.
	out.Reset()
	if code := run([]string{"--keys", trust, "--quorum", "3", filepath.Join(vectorDir, "base.jsonl")}, nil, &out, &errOut); code != 1 ||
		!strings.Contains(out.String(), "the quorum is 3") {
		t.Fatalf("quorum 3: exit %d:\n%s", code, out.String())
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"keys":[],"keys":[]}`), 0o644)
	for _, args := range [][]string{{}, {"a", "b"}, {"--genesis", "xyz", "f"}, {"--checkpoint", "nope:x", "f"}, {"--bogus", "f"},
		{"--seam", "13", "f"}, {"--seam", "13:" + strings.Repeat("a", 64), "f"}, {"--quorum", "-1", "f"}, {"--keys", bad, "f"},
		{"--keys", "does-not-exist.json", "f"}, {"--checkpoint", "does-not-exist.note", "f"}} {
		if code := run(args, nil, &out, &errOut); code != 64 {
			t.Errorf("run(%q) = %d, want 64", args, code)
		}
	}
	out.Reset()
	if code := run([]string{"does-not-exist.jsonl"}, nil, &out, &errOut); code != 1 || !strings.HasPrefix(out.String(), "VERDICT FAIL_UNREADABLE_EXPORT") {
		t.Errorf("missing file: exit %d, want 1: %s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"http://127.0.0.1:1"}, nil, &out, &errOut); code != 1 || !strings.HasPrefix(out.String(), "VERDICT FAIL_UNREACHABLE_HOST") {
		t.Errorf("unreachable host: exit %d, want 1: %s", code, out.String())
	}
}

// The verifier's small-order list and the ledger's check must agree, with
// either sign bit.
func TestSmallOrderListMatchesLedger(t *testing.T) {
	for _, s := range smallOrder {
		for _, sign := range []byte{0, 0x80} {
			b, err := hex.DecodeString(s)
			if err != nil {
				t.Fatal(err)
			}
			b[31] |= sign
			if _, err := ledger.ParsePublicKey(b); !errors.Is(err, ledger.ErrSmallOrderKey) {
				t.Errorf("ledger accepts small-order key %x: %v", b, err)
			}
			pk := key{PublicKey: hex.EncodeToString(b), Role: "writer"}
			if _, err := pinKeys([]key{pk}); err == nil || !strings.Contains(err.Error(), "small-order") {
				t.Errorf("verifier accepts small-order key %x: %v", b, err)
			}
		}
	}
}

// FuzzCanonicalHeader checks the verifier's own canonical encoder against the
// ledger's (which wraps a JCS library) for arbitrary header values.
func FuzzCanonicalHeader(f *testing.F) {
	f.Add(int64(0), "2025-03-03T09:00:00Z", "genesis", "ed25519:00", "ab")
	f.Add(int64(153), "\u2028\x00", "\"\\\x1f", "é😀", "</script>")
	f.Fuzz(func(t *testing.T, index int64, ts, kind, writer, hash string) {
		if index < 0 || index >= 1<<53 || !utf8.ValidString(ts) || !utf8.ValidString(kind) || !utf8.ValidString(writer) || !utf8.ValidString(hash) {
			return
		}
		b := block{Index: index, Timestamp: ts, Kind: kind, Writer: writer, PayloadHash: hash, PrevHash: hash}
		m := map[string]any{"index": index, "timestamp": ts, "kind": kind, "writer": writer, "payload_hash": hash, "prev_hash": hash}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ledger.Canonicalize(data)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonicalHeader(b); !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}

// --state remembers the checkpoint of a pass and requires it next time, so a
// later truncated or rewritten export fails without the auditor copying
// anything.
func TestStateFile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "checkpoint")
	trust := filepath.Join(vectorDir, "trust.json")
	var out, errOut bytes.Buffer
	if code := run([]string{"--keys", trust, "--state", state, filepath.Join(vectorDir, "base.jsonl")}, nil, &out, &errOut); code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	saved, err := os.ReadFile(state)
	if err != nil || !strings.HasPrefix(string(saved), "vectors.proofsite.test/ledger\n20\n") || !strings.Contains(string(saved), "\n\n\u2014 ") {
		t.Fatalf("state file (the signed note): %q %v", saved, err)
	}
	for _, later := range []string{"truncated_head.jsonl", "rewritten_tail.jsonl", "off_spine_row_replaced.jsonl"} {
		out.Reset()
		if code := run([]string{"--keys", trust, "--state", state, filepath.Join(vectorDir, later)}, nil, &out, &errOut); code != 1 ||
			!strings.HasPrefix(out.String(), "VERDICT FAIL_CHECKPOINT_NOT_EXTENDED") {
			t.Fatalf("%s after a remembered checkpoint: exit %d\n%s", later, code, out.String())
		}
	}
	if again, _ := os.ReadFile(state); !bytes.Equal(again, saved) {
		t.Fatal("a failed run changed the remembered checkpoint")
	}
	// The note also works as a file given to --checkpoint.
	out.Reset()
	if code := run([]string{"--keys", trust, "--checkpoint", state, filepath.Join(vectorDir, "base.jsonl")}, nil, &out, &errOut); code != 0 {
		t.Fatalf("--checkpoint FILE: exit %d\n%s", code, out.String())
	}
}
