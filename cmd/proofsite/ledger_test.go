package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/site/content"
)

const realContent = "../../content"

// cli runs one proofsite command line the way main does.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// initLedger runs "proofsite ledger init" on a fresh data directory.
func initLedger(t *testing.T, content string) string {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	if code, out, errOut := cli(t, "ledger", "init", "--data", data, "--content", content); code != 0 {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	return data
}

// The acceptance test of the chain: init on a fresh data dir, then verify
// --json reports the documented seam at 153 and passes.
func TestLedgerInitVerifyEndToEnd(t *testing.T) {
	data := initLedger(t, realContent)
	code, out, errOut := cli(t, "ledger", "verify", "--json", "--data", data, "--content", realContent)
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errOut)
	}
	var v ledger.Verdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ch, err := content.LoadCharter(os.DirFS(realContent))
	if err != nil {
		t.Fatal(err)
	}
	seams := ch.Ledger.Seams()
	if len(seams) != 1 {
		t.Fatalf("seams %v", seams)
	}
	if !v.CanonicalSpineValid || v.StrictTableValid || v.StrictTableBreakAtBlock == nil || *v.StrictTableBreakAtBlock != 153 ||
		v.Verdict != "PASS_WITH_DOCUMENTED_STRICT_SEAM" || v.Status != "ok" || v.Warning == nil ||
		!strings.Contains(*v.Warning, "block 153: "+seams[0].Reason) || v.Valid || v.ValidScope != "strict_table" || !v.ValidDeprecated ||
		v.LastFullWalkAt == nil || v.RowsChecked < 200 || len(v.OffSpineRows) != 1 || v.OffSpineRows[0] != 152 {
		t.Fatalf("verdict:\n%s", out)
	}
	for _, field := range []string{`"canonical_spine_valid": true`, `"strict_table_valid": false`, `"strict_table_break_at_block": 153`, `"valid_deprecated": true`} {
		if !strings.Contains(out, field) {
			t.Errorf("output lacks %s", field)
		}
	}

	// Keys: private files 0600, the witness keys apart from the writer
	// key, public keys published.
	for _, name := range []string{"keys/writer.pem", "witness-keys/witness-1.pem", "witness-keys/witness-2.pem"} {
		fi, err := os.Stat(filepath.Join(data, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", name, fi.Mode(), err)
		}
	}
	// The trust document: keys with the Bridge's, the seam pinned, the quorum, the log.
	trust, _, err := chain.ReadTrustFile(filepath.Join(data, "keys.json"))
	if err != nil || trust.Legacy() || trust.WitnessQuorum != 2 || len(trust.DocumentedSeams) != 1 || !trust.DocumentedSeams[0].Pinned() ||
		trust.Log.Origin != "proof.endurance-commons.example/ledger" || !slices.ContainsFunc(trust.Keys, func(k ledger.PublishedKey) bool { return k.Role == ledger.RoleBridge }) {
		t.Fatalf("trust document %+v: %v", trust, err)
	}

	// Human-readable by default.
	code, out, _ = cli(t, "ledger", "verify", "--data", data, "--content", realContent)
	if code != 0 || !strings.HasPrefix(out, "VERDICT PASS_WITH_DOCUMENTED_STRICT_SEAM\n") || !strings.Contains(out, "strict_table_break_at_block  153") {
		t.Fatalf("human verify: exit %d\n%s", code, out)
	}

	// Idempotent.
	code, out, errOut = cli(t, "ledger", "init", "--data", data, "--content", realContent)
	if code != 0 || !strings.Contains(out, "already initialised") {
		t.Fatalf("second init: exit %d\n%s%s", code, out, errOut)
	}

	// PROOFSITE_DATA is the default for --data.
	t.Setenv("PROOFSITE_DATA", data)
	if code, out, errOut := cli(t, "ledger", "verify", "--content", realContent); code != 0 {
		t.Fatalf("verify via PROOFSITE_DATA: exit %d\n%s%s", code, out, errOut)
	}
}

// copyContent copies the real content directory so a test can change it.
func copyContent(t *testing.T, edit func(dir string)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.CopyFS(dir, os.DirFS(realContent)); err != nil {
		t.Fatal(err)
	}
	edit(dir)
	return dir
}

func TestLedgerInitRefusesDifferentChain(t *testing.T) {
	data := initLedger(t, realContent)
	other := copyContent(t, func(dir string) {
		path := filepath.Join(dir, "ledger", "history.jsonl")
		h, _ := os.ReadFile(path)
		h = bytes.Replace(h, []byte(`"articles":40`), []byte(`"articles":41`), 1)
		if err := os.WriteFile(path, h, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	code, _, errOut := cli(t, "ledger", "init", "--data", data, "--content", other)
	if code != 1 || !strings.Contains(errOut, "refusing to overwrite") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	otherDescription := copyContent(t, func(dir string) {
		path := filepath.Join(dir, "ledger", "history.jsonl")
		h, _ := os.ReadFile(path)
		os.WriteFile(path, bytes.Replace(h, []byte("Constitution v1.0 published"), []byte("Constitution v1.0 out"), 1), 0o644)
	})
	if code, _, errOut := cli(t, "ledger", "init", "--data", data, "--content", otherDescription); code != 1 || !strings.Contains(errOut, "description of block 2 differs") {
		t.Fatalf("changed description: exit %d: %s", code, errOut)
	}
	if code, out, _ := cli(t, "ledger", "verify", "--data", data, "--content", realContent); code != 0 {
		t.Fatalf("the existing chain was harmed: %s", out)
	}
}

// A failed first init leaves no chain and no keys behind.
func TestLedgerInitFailureLeavesNothing(t *testing.T) {
	editSeams := func(dir, replacement string) {
		t.Helper()
		path := filepath.Join(dir, "site.yaml")
		src, _ := os.ReadFile(path)
		seams := regexp.MustCompile(`(?s)  documented_seams:\n.*?\n\n`)
		if !seams.Match(src) {
			t.Fatal("no documented_seams section in site.yaml")
		}
		if err := os.WriteFile(path, seams.ReplaceAll(src, []byte(replacement)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	noSeams := copyContent(t, func(dir string) { editSeams(dir, "  documented_seams: []\n\n") })
	data := filepath.Join(t.TempDir(), "data")
	code, _, errOut := cli(t, "ledger", "init", "--data", data, "--content", noSeams)
	if code != 1 || !strings.Contains(errOut, "FAIL_UNDOCUMENTED_STRICT_BREAK") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	entries, _ := os.ReadDir(data)
	if len(entries) != 0 {
		t.Fatalf("a failed init left %v", entries)
	}
	badYAML := copyContent(t, func(dir string) { editSeams(dir, "  documented_seams:\n    - block: 153\n\n") })
	if code, _, errOut := cli(t, "ledger", "init", "--data", data, "--content", badYAML); code != 1 || !regexp.MustCompile(`site\.yaml:\d+: ledger\.documented_seams\[0\]\.reason is required`).MatchString(errOut) {
		t.Fatalf("seam without reason: exit %d: %s", code, errOut)
	}
}

func TestLedgerAppendExportVerify(t *testing.T) {
	data := initLedger(t, realContent)
	common := []string{"--data", data, "--content", realContent}
	payload := filepath.Join(t.TempDir(), "payload.json")
	os.WriteFile(payload, []byte(`{"action":"EXTERNAL_SEND","decision":"deny"}`), 0o644)
	code, out, errOut := cli(t, append([]string{"ledger", "append", "--kind", "gate_decision", "--payload-file", payload, "--description", "secret reasons"}, common...)...)
	if code != 0 || !strings.HasPrefix(out, "appended block 224 ") {
		t.Fatalf("append: exit %d %s%s", code, out, errOut)
	}
	export := filepath.Join(t.TempDir(), "export.jsonl")
	if code, _, errOut := cli(t, append([]string{"ledger", "export", "--out", export}, common...)...); code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	public, _ := os.ReadFile(export)
	if bytes.Contains(public, []byte("secret reasons")) || bytes.Contains(public, []byte("EXTERNAL_SEND")) || bytes.Count(public, []byte("\n")) != 226 {
		t.Fatal("public export leaks private data or has the wrong length")
	}
	code, out, _ = cli(t, append([]string{"ledger", "export", "--private"}, common...)...)
	if code != 0 || !strings.Contains(out, "secret reasons") || !strings.Contains(out, `"payload":{"action":"EXTERNAL_SEND","decision":"deny"}`) {
		t.Fatalf("private export: exit %d", code)
	}
	trust := filepath.Join(data, "keys.json") // the trust document init wrote: pins keys, genesis, seams, quorum, log
	code, out, _ = cli(t, "ledger", "verify", "--json", "--keys", trust, "--file", export)
	var v ledger.Verdict
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Head.Index != 224 || v.Verdict != ledger.VerdictPassWithSeam {
		t.Fatalf("verify export: exit %d\n%s", code, out)
	}
	// The checkpoint printed now detects a later truncation.
	lines := strings.SplitAfter(string(public), "\n")
	truncated := filepath.Join(t.TempDir(), "truncated.jsonl")
	os.WriteFile(truncated, []byte(strings.Join(lines[:len(lines)-2], "")), 0o644)
	// The export's own signed checkpoint no longer matches its rows.
	if code, out, _ := cli(t, "ledger", "verify", "--keys", trust, "--file", truncated); code != 1 || !strings.HasPrefix(out, "VERDICT FAIL_CHECKPOINT_INVALID") {
		t.Fatalf("truncated export under its original checkpoint: exit %d\n%s", code, out)
	}
	code, out, _ = cli(t, "ledger", "verify", "--keys", trust, "--file", truncated, "--checkpoint", v.Checkpoint.String())
	if code != 1 || !strings.HasPrefix(out, "VERDICT FAIL_CHECKPOINT_NOT_EXTENDED") {
		t.Fatalf("truncated export with checkpoint: exit %d\n%s", code, out)
	}
	// --state remembers the checkpoint of a pass and requires it next time.
	state := filepath.Join(t.TempDir(), "checkpoint")
	if code, out, errOut := cli(t, "ledger", "verify", "--keys", trust, "--file", export, "--state", state); code != 0 {
		t.Fatalf("verify --state: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := cli(t, "ledger", "verify", "--keys", trust, "--file", truncated, "--state", state); code != 1 || !strings.HasPrefix(out, "VERDICT FAIL_CHECKPOINT_NOT_EXTENDED") {
		t.Fatalf("truncated export after a remembered checkpoint: exit %d\n%s", code, out)
	}
	// The store extends the same checkpoint, given as a file.
	cpFile := filepath.Join(t.TempDir(), "checkpoint.txt")
	os.WriteFile(cpFile, []byte(v.Checkpoint.String()), 0o644)
	if code, out, _ := cli(t, append([]string{"ledger", "verify", "--checkpoint", cpFile}, common...)...); code != 0 {
		t.Fatalf("store vs its own checkpoint: %s", out)
	}
	// --quorum asks for more witnesses than sign: no pass.
	if code, out, _ := cli(t, "ledger", "verify", "--keys", trust, "--quorum", "3", "--file", export); code != 1 || !strings.HasPrefix(out, "VERDICT FAIL_CANONICAL_SPINE_BROKEN") {
		t.Fatalf("--quorum 3: exit %d\n%s", code, out)
	}
	// Seams come from the trust document or --seam, never from the export.
	doc, _, err := chain.ReadTrustFile(trust)
	if err != nil {
		t.Fatal(err)
	}
	seam := doc.DocumentedSeams[0]
	doc.DocumentedSeams = []ledger.Seam{}
	noSeams := filepath.Join(t.TempDir(), "keys.json")
	raw, _ := json.Marshal(doc)
	os.WriteFile(noSeams, raw, 0o644)
	if code, out, _ := cli(t, "ledger", "verify", "--keys", noSeams, "--file", export); code != 1 || !strings.HasPrefix(out, "VERDICT FAIL_UNDOCUMENTED_STRICT_BREAK") {
		t.Fatalf("no pinned seam: exit %d\n%s", code, out)
	}
	flag := fmt.Sprintf("%d:%s:%s", seam.Block, seam.Hash, seam.PrevHash)
	if code, out, _ := cli(t, "ledger", "verify", "--keys", noSeams, "--seam", flag, "--file", export); code != 0 || !strings.HasPrefix(out, "VERDICT PASS_WITH_DOCUMENTED_STRICT_SEAM") {
		t.Fatalf("--seam %s: exit %d\n%s", flag, code, out)
	}
	if code, out, _ := cli(t, append([]string{"ledger", "verify", "--keys", noSeams, "--seam", flag}, common...)...); code != 0 {
		t.Fatalf("store with --seam: exit %d\n%s", code, out)
	}
	// A tampered spine row in a real export fails.
	tampered := strings.Replace(string(public), `"kind":"external_audit"`, `"kind":"internal_audit"`, 1)
	tf := filepath.Join(t.TempDir(), "tampered.jsonl")
	os.WriteFile(tf, []byte(tampered), 0o644)
	if code, out, _ := cli(t, "ledger", "verify", "--file", tf); code != 1 || !strings.HasPrefix(out, "VERDICT FAIL_CANONICAL_SPINE_BROKEN") {
		t.Fatalf("tampered export: exit %d\n%s", code, out)
	}
}

func TestLedgerUsage(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, args := range [][]string{
		{"ledger"},
		{"ledger", "bogus"},
		{"ledger", "append", "--data", data},
		{"ledger", "verify", "--checkpoint", "nope", "--data", data},
		{"ledger", "verify", "--checkpoint", "nope:x", "--data", data},
		{"ledger", "verify", "--seam", "153", "--data", data},
		{"ledger", "verify", "--quorum", "-1", "--data", data},
		{"ledger", "verify", "--keys", "/nonexistent/keys.json", "--data", data},
		{"ledger", "verify", "--genesis", "XYZ", "--data", data},
		{"ledger", "init", "--bogus"},
		{"ledger", "export", "stray"},
	} {
		if code, _, _ := cli(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, errOut := cli(t, "ledger", "verify", "--data", data, "--content", realContent); code != 1 || !strings.Contains(errOut, "ledger init") {
		t.Errorf("verify without a ledger: exit %d %s", code, errOut)
	}
	if code, out, _ := cli(t, "ledger", "--help"); code != 0 || !strings.Contains(out, "init") {
		t.Errorf("help: exit %d", code)
	}
}

// TestLedgerVerifyVectors runs the shared tamper vectors through
// "proofsite ledger verify --file": the same files and expected verdicts as
// the ledger package and the standalone verifier.
func TestLedgerVerifyVectors(t *testing.T) {
	const dir = "../../ledger/testdata/vectors"
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Name string
		File string
		Args struct{ Genesis, Keys, Checkpoint string }
		Want struct {
			Error                   bool
			Verdict                 string
			CanonicalSpineValid     bool   `json:"canonical_spine_valid"`
			StrictTableValid        bool   `json:"strict_table_valid"`
			StrictTableBreakAtBlock *int64 `json:"strict_table_break_at_block"`
		}
	}
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			args := []string{"ledger", "verify", "--json", "--file", filepath.Join(dir, v.File)}
			if v.Args.Genesis != "" {
				args = append(args, "--genesis", v.Args.Genesis)
			}
			if v.Args.Keys != "" {
				args = append(args, "--keys", filepath.Join(dir, v.Args.Keys))
			}
			if v.Args.Checkpoint != "" {
				args = append(args, "--checkpoint", v.Args.Checkpoint)
			}
			code, out, errOut := cli(t, args...)
			if v.Want.Error {
				if code != 1 || out != "" {
					t.Fatalf("exit %d\n%s%s", code, out, errOut)
				}
				return
			}
			var got ledger.Verdict
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("exit %d: %v\n%s", code, err, errOut)
			}
			b := got.StrictTableBreakAtBlock
			w := v.Want.StrictTableBreakAtBlock
			if got.Verdict != v.Want.Verdict || got.CanonicalSpineValid != v.Want.CanonicalSpineValid || got.StrictTableValid != v.Want.StrictTableValid ||
				(b == nil) != (w == nil) || (b != nil && *b != *w) || (code == 0) != got.Pass() {
				t.Fatalf("exit %d\n%s", code, out)
			}
		})
	}
}

// The build reads the chain's tiles, not its store: it builds the explorer
// while another process holds the store (as serve does), shows a failing
// verdict when a row of the tiles was altered, and refuses, saying how to
// write them again, when there are no tiles.
func TestBuildReadsTheTiles(t *testing.T) {
	data := initLedger(t, realContent)
	held, err := chain.Open(chain.Options{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	out := filepath.Join(t.TempDir(), "public")
	build := func() (int, string, string) {
		return cli(t, "build", "--content", realContent, "--out", out, "--data", data)
	}
	code, stdout, stderr := build()
	if code != 0 {
		t.Fatalf("build beside an open chain: exit %d\n%s%s", code, stdout, stderr)
	}
	index, _ := os.ReadFile(filepath.Join(out, "explorer", "index.html"))
	seam, _ := os.ReadFile(filepath.Join(out, "explorer", "block", "153.html"))
	if !bytes.Contains(index, []byte("PASS_WITH_DOCUMENTED_STRICT_SEAM")) || !bytes.Contains(index, []byte("Signed checkpoint</dt><dd><code>size 224,")) ||
		!bytes.Contains(seam, []byte("Documented seam")) {
		t.Fatalf("the explorer does not show the verified chain:\n%s", index)
	}

	// One hex digit of row 5's signature changed: still a canonical entry.
	bundle := filepath.Join(data, chain.TilesDir, "tile", "entries", "000.p", "224")
	raw, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(raw, []byte(`"index":5,`))
	at += bytes.Index(raw[at:], []byte(`"signature":"`)) + len(`"signature":"`)
	if raw[at] == '0' {
		raw[at] = '1'
	} else {
		raw[at] = '0'
	}
	if err := os.WriteFile(bundle, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = build()
	index, _ = os.ReadFile(filepath.Join(out, "explorer", "index.html"))
	if code != 0 || !strings.Contains(stdout, "note: the explorer shows the verdict FAIL") || !bytes.Contains(index, []byte(`class="status failed"`)) {
		t.Fatalf("altered tiles: exit %d\n%s%s", code, stdout, stderr)
	}
	block, _ := os.ReadFile(filepath.Join(out, "explorer", "block", "5.html"))
	if !bytes.Contains(block, []byte("Signatures verify</dt><dd>no")) {
		t.Error("block 5's page does not say its signatures fail")
	}

	if err := os.RemoveAll(filepath.Join(data, chain.TilesDir)); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr = build(); code != 1 || !strings.Contains(stderr, "explorer: the chain's tiles in") || !strings.Contains(stderr, "ledger init") {
		t.Fatalf("build without tiles: exit %d\n%s", code, stderr)
	}
}
