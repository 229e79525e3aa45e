package gate

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proofsite/proofsite/ledger"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func demoOptions() DemoOptions {
	bridgeOnly := []Control{BridgeAuth}
	return DemoOptions{
		Policy: PolicyOptions{
			Actions: []ActionRule{
				{PublicClaimChange, bridgeOnly}, {KeyRotation, bridgeOnly}, {ExternalSend, bridgeOnly},
				{TrustRootRefresh, bridgeOnly}, {CertAnchor, bridgeOnly},
			},
			Denied:     []Action{HardDelete},
			BridgeKeys: []ledger.PublicKey{bridge.Public()},
		},
		Board: []BoardRow{
			{"maturity", "gate_public_launch"}, {"bridge_auth", "live_and_proven"}, {"node_approval_quorum", "roadmap"},
			{"dissent_channel", "roadmap"}, {"runtime_enforcement", "roadmap"}, {"enforcement_model", "orchestrator_invoked_checkpoint_today"},
		},
		Source: "site.yaml",
	}
}

// DemoSections are the four parts of the published transcript, in order.
var demoSections = []string{"1. DENY BY DEFAULT", "2. ALLOW WITH A BRIDGE AUTHORIZATION", "3. TAMPER REJECTION", "4. THE CAPABILITY BOARD"}

func TestDemoGolden(t *testing.T) {
	got, err := Demo(demoOptions())
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Demo(demoOptions())
	if !bytes.Equal(got, again) {
		t.Fatal("the demo is not reproducible")
	}
	golden := filepath.Join("testdata", "demo_output.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the demo differs from %s (run go test -update if the change is intended):\n%s", golden, got)
	}
}

// TestDemoProducedByCheckpoint reads the transcript the way an auditor
// would: the artifact it prints verifies with the demo key, the checkpoint
// allows it under the demo policy at the demo clock, and this site's own
// policy rejects it.
func TestDemoProducedByCheckpoint(t *testing.T) {
	out, err := Demo(demoOptions())
	if err != nil {
		t.Fatal(err)
	}
	checkDemoTranscript(t, out, demoOptions())
}

// checkDemoTranscript checks a transcript against the checkpoint.
func checkDemoTranscript(t *testing.T, out []byte, opts DemoOptions) {
	t.Helper()
	text := string(out)
	last := -1
	for _, s := range demoSections {
		i := strings.Index(text, "\n"+s+"\n")
		if i < 0 || i < last {
			t.Fatalf("section %q missing or out of order", s)
		}
		last = i
	}
	if !strings.Contains(text, "DEMO KEY   "+string(DemoKeyID())+"   (labelled demo key, NOT a Bridge key)") ||
		!strings.Contains(text, "authorizes nothing outside this demo") || !strings.Contains(text, DemoSeedText) {
		t.Error("the demo key is not labelled")
	}
	// The signed artifact printed in section 2.
	_, after, _ := strings.Cut(text, "The signed artifact, as \"proofsite gate sign\" prints it:\n")
	artifact, _, _ := strings.Cut(after, "\n")
	a, err := Verify([]byte(artifact), NewKeys(DemoKey().Public()))
	if err != nil {
		t.Fatalf("the printed artifact does not verify with the demo key: %v\n%s", err, artifact)
	}
	demo, err := newPolicy(PolicyOptions{Actions: opts.Policy.Actions, Denied: opts.Policy.Denied, BridgeKeys: []ledger.PublicKey{DemoKey().Public()}})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Action: a.Action, Scope: a.Scope, PayloadSHA256: sha256.Sum256([]byte(demoPayload)), Authorization: []byte(artifact), Now: DemoClock}
	if ev := demo.Evaluate(req); !ev.Allowed() {
		t.Errorf("the printed artifact is denied under the demo policy: %v", ev.Err())
	}
	site := mustPolicy(t, opts.Policy)
	if ev := site.Evaluate(req); ev.Allowed() || !errors.Is(ev.Err(), ErrWrongKey) {
		t.Errorf("the site's policy does not reject the demo key: %v", ev.Err())
	}
	// The decisions: two denials, one allow, every tamper case denied with
	// its reason, the quorum action denied.
	sec := func(i int) string {
		s := text[strings.Index(text, demoSections[i]):]
		if i+1 < len(demoSections) {
			s = s[:strings.Index(s, demoSections[i+1])]
		}
		return s
	}
	if strings.Count(sec(0), "decision   DENY") != 2 || strings.Contains(sec(0), "ALLOW") {
		t.Errorf("section 1:\n%s", sec(0))
	}
	if strings.Count(sec(1), "decision   ALLOW") != 1 {
		t.Errorf("section 2:\n%s", sec(1))
	}
	for _, code := range []string{"tampered", "wrong_key", "expired", "not_yet_valid", "scope", "payload_mismatch", "denied_action"} {
		if !strings.Contains(sec(2), "["+code+"]") {
			t.Errorf("section 3 has no %s case", code)
		}
	}
	if strings.Contains(sec(2), "ALLOW") || strings.Count(sec(2), "decision   DENY") != 11 {
		t.Errorf("section 3:\n%s", sec(2))
	}
	for _, want := range []string{"BRIDGE_AUTH           SATISFIED", "NODE_APPROVAL_QUORUM  UNVERIFIABLE", "DISSENT_CHANNEL       UNVERIFIABLE", "[unverifiable]"} {
		if !strings.Contains(sec(3), want) {
			t.Errorf("section 4 lacks %q", want)
		}
	}
	for _, r := range opts.Board {
		if !strings.Contains(sec(3), r.Key) || !strings.Contains(sec(3), r.Value) {
			t.Errorf("section 4 lacks the board row %s %s", r.Key, r.Value)
		}
	}
}

func TestDemoRefusesDemoKeyAsBridge(t *testing.T) {
	opts := demoOptions()
	opts.Policy.BridgeKeys = append(opts.Policy.BridgeKeys, DemoKey().Public())
	if _, err := Demo(opts); !errors.Is(err, ErrPolicy) {
		t.Errorf("got %v", err)
	}
}
