package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
)

// TestServedTamperIsCaught tampers with a stored row behind the store's
// back, as an attacker with disk access would, then serves the data folder
// with the real proofsite binary and runs the real downloadable verifier
// against it over HTTP: the verifier must fail and exit non-zero.
func TestServedTamperIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	t.Parallel()
	proofsite, verifier := command(t, "proofsite"), command(t, "verify-ledger")
	data := filepath.Join(t.TempDir(), "data")
	if msg, err := exec.Command(proofsite, "ledger", "init", "--data", data, "--content", "../../content").CombinedOutput(); err != nil {
		t.Fatalf("ledger init: %v\n%s", err, msg)
	}

	raw, err := os.ReadFile(filepath.Join(data, "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc ledger.KeysDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	keys, err := ledger.NewKeySet(doc.Keys)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(filepath.Join(data, "ledger"), Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	editRow(t, s, 100, "kind", "gate_decision_forged")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(proofsite, "serve", "--addr", "127.0.0.1:0", "--data", data, "--content", "../../content", "--public", t.TempDir())
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`live edge on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				base <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-base:
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start")
	}

	out, err := exec.Command(verifier, url).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("verify-ledger against a tampered store: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "VERDICT FAIL_CANONICAL_SPINE_BROKEN") || !strings.Contains(string(out), "spine block 100") {
		t.Errorf("verify-ledger did not name the tampered block:\n%s", out)
	}
}
