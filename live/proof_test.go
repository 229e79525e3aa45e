package live

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/proofsite/proofsite/ledger"
)

// The chain status and the latest state carry what a verifier pins: the
// spine's head as verified, the pinned genesis, the seams with their
// hashes, the witness quorum, and the checkpoint signed with the log's key.
func TestChainStatusCarriesThePins(t *testing.T) {
	l := testChain(t)
	srv := newTestServer(t, Options{Chain: l})
	trust := l.Trust()
	v, _ := l.Verdict()
	for _, path := range []string{"/api/chain/status", "/api/chain/latest"} {
		t.Run(path, func(t *testing.T) {
			resp, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, path, nil))
			var got struct {
				Head             json.RawMessage       `json:"head"`
				Genesis          BlockRef              `json:"genesis"`
				Keys             []ledger.PublishedKey `json:"keys"`
				DocumentedSeams  []ledger.Seam         `json:"documented_seams"`
				WitnessQuorum    int                   `json:"witness_quorum"`
				SignedCheckpoint string                `json:"signed_checkpoint"`
			}
			if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %v: %s", resp.StatusCode, err, body)
			}
			var head struct {
				Index int64       `json:"index"`
				Hash  ledger.Hash `json:"hash"`
			}
			if err := json.Unmarshal(got.Head, &head); err != nil || head.Index != v.Head.Index || head.Hash != v.Head.Hash {
				t.Errorf("head %s, the verdict's %+v", got.Head, v.Head)
			}
			if got.Genesis.Index != 0 || got.Genesis.Hash != trust.GenesisHash || got.WitnessQuorum != trust.WitnessQuorum ||
				len(got.DocumentedSeams) != 1 || got.DocumentedSeams[0] != trust.DocumentedSeams[0] || !got.DocumentedSeams[0].Pinned() ||
				len(got.Keys) != len(trust.Keys) {
				t.Errorf("pins %+v, trust document %+v", got, trust)
			}
			cp, err := ledger.OpenCheckpoint([]byte(got.SignedCheckpoint), trust.Log.CheckpointKey)
			if err != nil || cp != *v.Checkpoint {
				t.Errorf("signed checkpoint %q: %v (want %+v)", got.SignedCheckpoint, err, v.Checkpoint)
			}
		})
	}
	// A failing verdict's checkpoint is not signed.
	failing := v
	failing.Verdict = ledger.VerdictSpineBroken
	srv = newTestServer(t, Options{Chain: &changingChain{Chain: l, verdict: failing, head: l.Head(), count: l.Count(), version: 1}, Publisher: l})
	_, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, "/api/chain/status", nil))
	if !bytes.Contains(body, []byte(`"signed_checkpoint":null`)) {
		t.Errorf("a failing chain's checkpoint was signed: %s", body)
	}
}

// The export streams the metadata-only JSONL with the checkpoint signed
// over exactly its rows; under the trust document it verifies.
func TestExportRoute(t *testing.T) {
	l := testChain(t)
	srv := newTestServer(t, Options{Chain: l})
	resp, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, ExportPath, nil))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ExportMediaType || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	r, err := ledger.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.Header().Private || bytes.Contains(body, []byte(`"payload"`)) || bytes.Contains(body, []byte(`"description"`)) {
		t.Fatal("the public export carries private members")
	}
	trust := l.Trust()
	opts, err := r.Options(&trust)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ledger.VerifyRows(r.Rows(), opts)
	if err != nil || res.Verdict.Verdict != ledger.VerdictPassWithSeam || res.Verdict.CheckpointPresented == nil ||
		res.Verdict.CheckpointPresented.Size != l.Count() {
		t.Fatalf("export verdict %+v: %v", res.Verdict, err)
	}
	// Without a publisher there is no export, and the server says why.
	srv = newTestServer(t, Options{Chain: l.Store})
	if resp, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, ExportPath, nil)); resp.StatusCode != 503 || !bytes.Contains(body, []byte("urn:proofsite:problem:unavailable")) {
		t.Errorf("no publisher: %d %s", resp.StatusCode, body)
	}
}

// The strict table returns every stored row, whatever the verdict covers.
func TestStrictTableEveryRow(t *testing.T) {
	l := testChain(t)
	v, _ := l.Verdict()
	v.RowsChecked, v.AppendedSinceWalk = 100, 0 // a verdict that covers fewer rows than are stored
	srv := newTestServer(t, Options{Chain: &changingChain{Chain: l, verdict: v, head: l.Head(), count: l.Count(), version: 1}})
	_, body := do(t, srv.app, httptest.NewRequest(http.MethodGet, "/api/ledger/strict-table", nil))
	var table TableResponse
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatal(err)
	}
	if int64(table.RowCount) != l.Count() || len(table.Rows) != table.RowCount {
		t.Fatalf("%d rows of %d", table.RowCount, l.Count())
	}
}
