package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/live"
)

// The shared chain vectors (ledger/testdata/vectors), run by every
// verifier in one table: ledger.VerifyRows over the export, the store's
// full walk over the same rows written into Badger, the live edge's
// /api/ledger/verify over that store, and the downloadable verify-ledger
// offline and in URL mode, against the live edge over the store and
// against a host on 127.0.0.1 that serves the export's rows and its signed
// checkpoint. proofsite ledger verify --file runs them in cmd/proofsite.
// Each must give the vector's verdict.

const vectorDir = "../testdata/vectors"

type vector struct {
	Name string `json:"name"`
	File string `json:"file"`
	Args struct {
		Genesis    string `json:"genesis"`
		Keys       string `json:"keys"`
		Checkpoint string `json:"checkpoint"`
	} `json:"args"`
	Want outcome `json:"want"`
}

// outcome is what the table compares: the vector's "want", and what each
// verifier reports.
type outcome struct {
	Error                   bool   `json:"error"`
	Verdict                 string `json:"verdict"`
	CanonicalSpineValid     bool   `json:"canonical_spine_valid"`
	StrictTableValid        bool   `json:"strict_table_valid"`
	StrictTableBreakAtBlock *int64 `json:"strict_table_break_at_block"`
	WarningCount            int    `json:"warnings"`
}

func (o outcome) String() string {
	at := "none"
	if o.StrictTableBreakAtBlock != nil {
		at = fmt.Sprint(*o.StrictTableBreakAtBlock)
	}
	return fmt.Sprintf("%s spine=%v table=%v break=%s warnings=%d", o.Verdict, o.CanonicalSpineValid, o.StrictTableValid, at, o.WarningCount)
}

func fromVerdict(v ledger.Verdict) outcome {
	return outcome{Verdict: v.Verdict, CanonicalSpineValid: v.CanonicalSpineValid, StrictTableValid: v.StrictTableValid,
		StrictTableBreakAtBlock: v.StrictTableBreakAtBlock, WarningCount: len(v.Warnings)}
}

func loadVectors(t testing.TB) []vector {
	data, err := os.ReadFile(filepath.Join(vectorDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// pins reads the trust document a vector names, if any.
func (v vector) trust(t testing.TB) *ledger.TrustDocument {
	if v.Args.Keys == "" {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(vectorDir, v.Args.Keys))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ledger.ParseTrustDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return &doc
}

// options are the vector's pins as Options, for an export read by r.
func (v vector) options(t testing.TB, r *ledger.Reader) ledger.Options {
	opts, err := r.Options(v.trust(t))
	if err != nil {
		t.Fatal(err)
	}
	if v.Args.Genesis != "" {
		opts.Genesis = must(ledger.ParseHash(v.Args.Genesis))
	}
	if v.Args.Checkpoint != "" {
		cp := must(ledger.ParseCheckpoint(v.Args.Checkpoint))
		opts.Checkpoint = &cp
	}
	return opts
}

// verifyExport is ledger.VerifyRows over the export file; err is a
// reading error (the export is refused).
func verifyExport(t testing.TB, v vector, data []byte) (outcome, ledger.Options, []ledger.Row, error) {
	r, err := ledger.NewReader(bytes.NewReader(data))
	if err != nil {
		return outcome{Error: true}, ledger.Options{}, nil, err
	}
	opts := v.options(t, r)
	var rows []ledger.Row
	for row, err := range r.Rows() {
		if err != nil {
			return outcome{Error: true}, opts, nil, err
		}
		rows = append(rows, row)
	}
	res, err := ledger.VerifyRows(func(yield func(ledger.Row, error) bool) {
		for _, row := range rows {
			if !yield(row, nil) {
				return
			}
		}
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return fromVerdict(res.Verdict), opts, rows, nil
}

// verifyStore writes the rows into a new Badger store under their own
// indexes, as a store holds them, opens it with the vector's pins and runs
// the full walk. It reports false when the rows cannot be stored as they
// are: a store keys rows by index, so it cannot hold a table whose indexes
// repeat or go down (the store-only vector "row moved to another key
// index" in TestTamperStore is that attack on a store).
func verifyStore(t testing.TB, opts ledger.Options, rows []ledger.Row) (outcome, *Store, bool) {
	blocks := make([]ledger.Block, len(rows))
	var privs []ledger.Private
	for i, row := range rows {
		if i > 0 && row.Block.Index() <= rows[i-1].Block.Index() {
			return outcome{}, nil, false
		}
		blocks[i] = row.Block
		if row.Private != nil {
			privs = append(privs, *row.Private)
		}
	}
	if privs != nil && len(privs) != len(blocks) {
		t.Fatal("a private export with rows missing their private part")
	}
	if len(blocks) == 0 {
		return outcome{}, nil, false
	}
	sopts := Options{Keys: opts.Keys, Genesis: opts.Genesis, Seams: opts.Seams, WitnessQuorum: opts.WitnessQuorum, Log: opts.Log}
	if err := sopts.fill(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Parallel subtests start verify-ledger processes. A child forked while
	// writeAll's store is open holds its directory lock until it execs, and
	// Open below would then fail; no fork happens under ForkLock.
	syscall.ForkLock.Lock()
	err := writeAll(dir, blocks, privs, sopts)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	res, err := s.FullWalk(context.Background(), opts.Checkpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fromVerdict(res.Verdict), s, true
}

// serveStore runs the live edge over s on 127.0.0.1, as proofsite serve
// does (without a checkpoint signer: the vectors' keys are not at hand), and
// returns its address and the verdict its /api/ledger/verify answers.
func serveStore(t testing.TB, s *Store) (string, outcome) {
	site := &live.Site{Charter: charter.Charter{SiteInfo: charter.SiteInfo{Title: "Vectors", BaseURL: "https://vectors.proofsite.test", APIURL: "https://api.vectors.proofsite.test"}}}
	srv, err := live.New(live.Options{PublicDir: t.TempDir(), Site: site, Chain: s})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	base := "http://" + ln.Addr().String()
	resp, err := http.Get(base + "/api/ledger/verify")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v ledger.Verdict
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/api/ledger/verify: %d %v", resp.StatusCode, err)
	}
	return base, fromVerdict(v)
}

// runVerifier runs the verify-ledger binary with the vector's pins.
func runVerifier(t testing.TB, v vector, target string) outcome {
	bin := command(t, "verify-ledger")
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
	out, err := exec.Command(bin, append(args, target)...).Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	var printed struct { // the members the table compares
		Verdict                 string   `json:"verdict"`
		CanonicalSpineValid     bool     `json:"canonical_spine_valid"`
		StrictTableValid        bool     `json:"strict_table_valid"`
		StrictTableBreakAtBlock *int64   `json:"strict_table_break_at_block"`
		Warnings                []string `json:"warnings"`
	}
	if err := json.Unmarshal(out, &printed); err != nil {
		t.Fatalf("verify-ledger %s: %v\n%s", target, err, out)
	}
	got := outcome{Verdict: printed.Verdict, CanonicalSpineValid: printed.CanonicalSpineValid, StrictTableValid: printed.StrictTableValid,
		StrictTableBreakAtBlock: printed.StrictTableBreakAtBlock, WarningCount: len(printed.Warnings)}
	pass := got.Verdict == ledger.VerdictPass || got.Verdict == ledger.VerdictPassWithSeam
	if code := exitCode(err); (code == 0) != pass || (code != 0 && code != 1) {
		t.Fatalf("verify-ledger %s: exit %d with verdict %s", target, code, got.Verdict)
	}
	switch got.Verdict {
	case "FAIL_UNREADABLE_EXPORT", "FAIL_UNREADABLE_HOST_RESPONSE":
		return outcome{Error: true}
	}
	return got
}

func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	return 0
}

// host serves an export's rows the way proofsite serve does: the chain
// status (keys, genesis, the signed checkpoint), the strict table (public
// members only) and the verdict the host computed, all fresh.
func host(t testing.TB, data []byte, hostVerdict outcome) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	var lines []json.RawMessage
	for sc.Scan() {
		lines = append(lines, json.RawMessage(bytes.Clone(sc.Bytes())))
	}
	var hdr struct {
		GenesisHash     string            `json:"genesis_hash"`
		Keys            json.RawMessage   `json:"keys"`
		DocumentedSeams json.RawMessage   `json:"documented_seams"`
		Checkpoint      string            `json:"checkpoint"`
		Private         bool              `json:"private"`
		Extra           map[string]string `json:"-"`
	}
	if err := json.Unmarshal(lines[0], &hdr); err != nil {
		t.Fatal(err)
	}
	rows := lines[1:]
	serve := func(w http.ResponseWriter, v map[string]any) {
		v["generated_at"] = time.Now().UTC()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/chain/status", func(w http.ResponseWriter, _ *http.Request) {
		serve(w, map[string]any{"status": "ok", "keys": hdr.Keys, "genesis": map[string]string{"hash": hdr.GenesisHash},
			"signed_checkpoint": hdr.Checkpoint})
	})
	mux.HandleFunc("GET /api/ledger/strict-table", func(w http.ResponseWriter, _ *http.Request) {
		serve(w, map[string]any{"rows": rows, "documented_seams": hdr.DocumentedSeams})
	})
	mux.HandleFunc("GET /api/ledger/verify", func(w http.ResponseWriter, _ *http.Request) {
		serve(w, map[string]any{"verdict": hostVerdict.Verdict, "canonical_spine_valid": hostVerdict.CanonicalSpineValid,
			"strict_table_valid": hostVerdict.StrictTableValid, "strict_table_break_at_block": hostVerdict.StrictTableBreakAtBlock})
	})
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL
}

func same(a, b outcome) bool {
	if a.Error || b.Error {
		return a.Error == b.Error
	}
	return a.String() == b.String()
}

// TestVectorsEveryVerifier is the one table: every vector, every verifier,
// one verdict.
func TestVectorsEveryVerifier(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs verify-ledger")
	}
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(vectorDir, v.File))
			if err != nil {
				t.Fatal(err)
			}
			export, opts, rows, _ := verifyExport(t, v, data)
			got := map[string]outcome{"ledger.VerifyRows (export)": export}
			private := bytes.Contains(data[:bytes.IndexByte(data, '\n')], []byte(`"private":true`))
			// A store presents no checkpoint but keeps its own tree (whose
			// disagreement with the rows TestTamperStore covers), so a
			// vector about a presented checkpoint has no store counterpart.
			var liveBase string
			if !export.Error && export.Verdict != ledger.VerdictCheckpointInvalid {
				if st, s, ok := verifyStore(t, opts, rows); ok {
					got["store.FullWalk"] = st
					liveBase, got["/api/ledger/verify (live edge over the store)"] = serveStore(t, s)
				}
			}
			got["verify-ledger (export)"] = runVerifier(t, v, filepath.Join(vectorDir, v.File))
			// The public strict table never carries payloads, so a payload
			// vector has no URL-mode counterpart.
			if !private {
				got["verify-ledger (URL)"] = runVerifier(t, v, host(t, data, export))
				if liveBase != "" {
					got["verify-ledger (URL, live edge)"] = runVerifier(t, v, liveBase)
				}
			}
			for name, o := range got {
				if !same(o, v.Want) {
					t.Errorf("%s: %s, want %s", name, o, v.Want)
				}
			}
			if len(got) < 3 && !strings.Contains(v.Name, "swapped") && !strings.Contains(v.Name, "duplicated") && !export.Error {
				t.Errorf("only %d verifiers ran", len(got))
			}
		})
	}
}
