package chain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/gate"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/ledger/store"
)

const historyFile = "../../content/ledger/history.jsonl"

// seams documents the bundled history's seam at 153.
var seams = []ledger.Seam{{Block: 153, Reason: "storage migration: 152 superseded, 153 links to 151"}}

func history(t *testing.T) []byte {
	t.Helper()
	h, err := os.ReadFile(historyFile)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func testOptions(t *testing.T) Options {
	return Options{DataDir: filepath.Join(t.TempDir(), "data"), Seams: seams, LogOrigin: "proof.example/ledger"}
}

func initChain(t *testing.T, opts Options) Report {
	t.Helper()
	rep, err := Init(context.Background(), opts, bytes.NewReader(history(t)))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestInitOpenAppendExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := testOptions(t)
	rep := initChain(t, opts)
	if rep.Existed || !rep.KeysCreated || rep.Rows != 224 || rep.Verdict.Verdict != ledger.VerdictPassWithSeam {
		t.Fatalf("report %+v", rep)
	}
	for _, p := range []string{"ledger", "keys.json", "keys/writer.pem", "witness-keys/witness-1.pem", "witness-keys/witness-2.pem"} {
		if _, err := os.Stat(filepath.Join(opts.DataDir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}

	ro := opts
	ro.ReadOnly = true
	c, err := Open(ro)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, ledger.Entry{Kind: "audit", Payload: []byte(`{}`)}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("append to a read-only chain: %v", err)
	}
	c.Close()

	c, err = Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, err := c.Append(ctx, ledger.Entry{Kind: "gate_decision", Payload: []byte(`{"decision":"deny"}`), Description: "private reason"})
	if err != nil || b.Index() != 224 {
		t.Fatalf("append: %v %v", b.Index(), err)
	}
	res, err := c.Walk(ctx)
	if err != nil || !res.Verdict.Pass() || res.Verdict.Head.Index != 224 {
		t.Fatalf("walk after append: %+v %v", res.Verdict, err)
	}
	var public, private bytes.Buffer
	if err := c.Export(ctx, &public, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Export(ctx, &private, true); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(public.Bytes(), []byte("\n")) != 226 || bytes.Contains(public.Bytes(), []byte("private reason")) || !bytes.Contains(private.Bytes(), []byte("private reason")) {
		t.Fatal("export: wrong length, or the public one leaks")
	}
	// The export verifies under the trust document, its signed checkpoint
	// included (over exactly its 225 rows).
	r, err := ledger.NewReader(&public)
	if err != nil {
		t.Fatal(err)
	}
	trust := c.Trust()
	vopts, err := r.Options(&trust)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ledger.VerifyRows(r.Rows(), vopts)
	if err != nil || v.Verdict.Verdict != ledger.VerdictPassWithSeam || v.Verdict.CheckpointPresented == nil || v.Verdict.CheckpointPresented.Size != 225 {
		t.Fatalf("the export does not verify: %+v %v", v.Verdict, err)
	}
}

// The trust document Init writes pins what a verifier needs; PublishTrust
// follows the configuration's policy without touching the keys, the
// genesis or the seams' pins; an older keys-only file is refused by Open
// and published again by Bootstrap.
func TestTrustDocument(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	bridge, _ := ledger.GenerateKey(nil)
	opts.BridgeKeys = []ledger.PublishedKey{ledger.Publish(bridge.Public(), ledger.RoleBridge)}
	rep := initChain(t, opts)
	if !rep.TrustPublished {
		t.Fatal("init did not publish the trust document")
	}
	doc, raw, err := PublishedTrust(opts.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if doc.GenesisHash != rep.Genesis || doc.WitnessQuorum != 2 || doc.Log.Origin != "proof.example/ledger" ||
		len(doc.DocumentedSeams) != 1 || !doc.DocumentedSeams[0].Pinned() || doc.DocumentedSeams[0].Block != 153 ||
		!slices.Contains(doc.Keys, opts.BridgeKeys[0]) {
		t.Fatalf("trust document:\n%s", raw)
	}
	if changed, err := PublishTrust(opts); changed || err != nil {
		t.Fatalf("an unchanged policy rewrote it: %v %v", changed, err)
	}

	next := opts
	next.WitnessQuorum, next.LogOrigin, next.BridgeKeys = 1, "other.example/ledger", nil
	next.Seams = []ledger.Seam{{Block: 153, Reason: "reworded"}}
	if changed, err := PublishTrust(next); !changed || err != nil {
		t.Fatalf("a new policy: %v %v", changed, err)
	}
	revised, _, _ := PublishedTrust(opts.DataDir)
	if revised.WitnessQuorum != 1 || revised.Log.Origin != "other.example/ledger" || revised.GenesisHash != doc.GenesisHash ||
		revised.DocumentedSeams[0].Hash != doc.DocumentedSeams[0].Hash || revised.DocumentedSeams[0].Reason != "reworded" ||
		slices.ContainsFunc(revised.Keys, func(k ledger.PublishedKey) bool { return k.Role == ledger.RoleBridge }) {
		t.Fatalf("revised: %+v", revised)
	}
	// A seam never pinned cannot be pinned from the rows under
	// verification: that takes Init, from the history.
	unpinned := opts
	unpinned.Seams = append(slices.Clone(opts.Seams), ledger.Seam{Block: 100, Reason: "not pinned"})
	if _, err := PublishTrust(unpinned); !errors.Is(err, ErrTrustOutdated) || !errors.Is(err, ledger.ErrSeamNotPinned) {
		t.Fatalf("unpinned seam: %v", err)
	}

	legacy := []byte(`{"keys":` + string(mustJSON(t, doc.Keys[:3])) + "}\n")
	if err := os.WriteFile(filepath.Join(opts.DataDir, KeysFile), legacy, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(opts); !errors.Is(err, ErrTrustOutdated) {
		t.Fatalf("open with a keys-only file: %v", err)
	}
	c, err := Bootstrap(context.Background(), opts, historyFile)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, again, _ := PublishedTrust(opts.DataDir); !bytes.Equal(again, raw) {
		t.Fatalf("bootstrap published\n%s\nwant\n%s", again, raw)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestInitIdempotentAndRefusesOtherChains(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	first := initChain(t, opts)
	again := initChain(t, opts)
	if !again.Existed || again.KeysCreated || again.Genesis != first.Genesis {
		t.Fatalf("second init: %+v", again)
	}
	other := bytes.Replace(history(t), []byte(`"articles":40`), []byte(`"articles":41`), 1)
	if _, err := Init(context.Background(), opts, bytes.NewReader(other)); err == nil || !strings.Contains(err.Error(), "refusing to overwrite") {
		t.Fatalf("init over another chain: %v", err)
	}
}

// A failed first start leaves nothing: no chain, no keys.
func TestInitAllOrNothing(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	opts.Seams = nil // the seam at 153 is then an undocumented break
	_, err := Init(context.Background(), opts, bytes.NewReader(history(t)))
	if err == nil || !strings.Contains(err.Error(), ledger.VerdictUndocumentedBreak) {
		t.Fatalf("init without seams: %v", err)
	}
	if entries, _ := os.ReadDir(opts.DataDir); len(entries) != 0 {
		t.Fatalf("a failed init left %v", entries)
	}
	if _, err := Init(context.Background(), testOptions(t), strings.NewReader("not json\n")); err == nil {
		t.Fatal("init from a broken history")
	}
}

func TestBootstrapAndWitnessKeysElsewhere(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	opts.Keys.WitnessDir = filepath.Join(t.TempDir(), "mounted", "witnesses")
	if _, err := Open(opts); !errors.Is(err, store.ErrNotInitialized) {
		t.Fatalf("open before init: %v", err)
	}
	c, err := Bootstrap(context.Background(), opts, historyFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.Store().Count() != 224 {
		t.Fatalf("%d rows", c.Store().Count())
	}
	c.Close()
	if _, err := os.Stat(filepath.Join(opts.Keys.WitnessDir, "witness-1.pem")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(opts.DataDir, WitnessKeyDir)); !os.IsNotExist(err) {
		t.Fatal("witness keys were also written to the data folder")
	}
	// Without the witness folder (an unmounted disk) the chain does not
	// open for writing; it does for reading.
	moved := opts
	moved.Keys.WitnessDir = filepath.Join(t.TempDir(), "unmounted")
	if _, err := Open(moved); !errors.Is(err, keystore.ErrIncomplete) {
		t.Fatalf("open without witness keys: %v", err)
	}
	moved.ReadOnly = true
	c, err = Bootstrap(context.Background(), moved, historyFile)
	if err != nil {
		t.Fatalf("read-only open without witness keys: %v", err)
	}
	c.Close()
}

func TestWalkIfDue(t *testing.T) {
	t.Parallel()
	opts := testOptions(t)
	initChain(t, opts)
	opts.WalkEvery = time.Hour
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	c.WalkIfDue(ctx) // never walked: due
	first := c.lastWalk
	if first.IsZero() {
		t.Fatal("the first WalkIfDue did not walk")
	}
	if _, ok := c.Store().Verdict(); !ok {
		t.Fatal("no cached verdict after the walk")
	}
	c.WalkIfDue(ctx)
	if c.lastWalk != first {
		t.Fatal("walked again before WalkEvery passed")
	}
	c.opts.WalkEvery = time.Nanosecond
	c.WalkIfDue(ctx)
	if !c.lastWalk.After(first) {
		t.Fatal("did not walk when due")
	}
}

// TestPublish runs the publish rule against a real chain: refused without
// an authorization (nothing appended), recorded with one, unchanged after.
func TestPublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := testOptions(t)
	initChain(t, opts)
	c, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bridge, err := ledger.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := &charter.Charter{
		Capabilities: []charter.Capability{{Key: "maturity", Value: "gate_public_launch"}},
		PublishRule:  charter.PublishRule{Key: "publish_rule", Action: "PUBLIC_CLAIM_CHANGE", Requires: "BRIDGE_AUTH", Text: "Claims need the Bridge."},
		Ledger:       charter.Ledger{DocumentedSeams: []charter.Seam{{Block: 153, Reason: seams[0].Reason}}},
		Gate: charter.Gate{
			Actions:    []charter.GateAction{{Action: "PUBLIC_CLAIM_CHANGE", Requires: []string{"BRIDGE_AUTH"}}},
			Denied:     []string{"HARD_DELETE"},
			BridgeKeys: []charter.BridgeKey{{KeyID: string(bridge.ID()), PublicKey: bridge.Public().String()}},
			ClaimFiles: []string{"products/gate/README.md"},
		},
	}
	files := fstest.MapFS{"products/gate/README.md": {Data: []byte("# The gate\n")}}
	now := time.Now().UTC().Truncate(time.Second)
	req := PublishRequest{Charter: ch, Content: files, Now: now}

	head := c.Store().Head().Hash()
	if _, err := c.Publish(ctx, req); !errors.Is(err, ErrPublishRefused) || !strings.Contains(err.Error(), "first publish") {
		t.Fatalf("first publish without authorization: %v", err)
	}
	if c.Store().Head().Hash() != head {
		t.Fatal("a refused publish appended")
	}
	policy, _ := Policy(ch)
	claims, err := PublicClaims(ch, files, policy)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := claims.Hash()
	req.Authorization, err = gate.Sign(gate.Authorization{ID: "publish-1", Action: gate.PublicClaimChange, Scope: claims.Names(),
		IssuedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour), PayloadSHA256: sum}, bridge)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.Publish(ctx, req)
	if err != nil || !strings.Contains(msg, "gate decision ALLOW under authorization publish-1 recorded at block 224") {
		t.Fatalf("authorized publish: %q %v", msg, err)
	}
	if b := c.Store().Head(); b.Header().Kind != gate.PublishKind {
		t.Fatalf("head is a %s block", b.Header().Kind)
	}
	req.Authorization = nil
	if msg, err := c.Publish(ctx, req); err != nil || !strings.Contains(msg, "unchanged since block 224") {
		t.Fatalf("republish: %q %v", msg, err)
	}
	files["products/gate/README.md"] = &fstest.MapFile{Data: []byte("# The gate, changed\n")}
	if _, err := c.Publish(ctx, req); !errors.Is(err, ErrPublishRefused) || !strings.Contains(err.Error(), "changed  file:products/gate/README.md") {
		t.Fatalf("changed claim file: %v", err)
	}
}
