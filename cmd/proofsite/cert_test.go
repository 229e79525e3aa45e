package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/gate"
)

// TestCertAnchor runs "proofsite cert anchor" against a real chain:
// usage errors exit 64, a certificate without a Bridge authorization (or
// with one for another payload) is refused and nothing is appended, a
// valid CERT_ANCHOR authorization appends one certificate block whose
// payload_hash is the certificate id, and anchoring it again is refused.
func TestCertAnchor(t *testing.T) {
	t.Parallel()
	key, keyID, public := bridgeKey(t)
	src := copyContent(t, func(dir string) { pinBridgeKey(t, dir, keyID, public) })
	data := initLedger(t, src)
	dir := t.TempDir()

	cert := map[string]any{"format": "proofsite.certificate/v1", "prompt_sha256": strings.Repeat("a", 64), "response_sha256": strings.Repeat("b", 64),
		"decision": "allow", "compliant": true, "score": 0, "categories": []string{}, "flag_ids": []string{},
		"patterns": map[string]any{"version": "1", "count": 52, "sha256": strings.Repeat("c", 64)}, "evaluated_at": "2026-11-23T04:00:00Z"}
	body, _ := json.Marshal(cert)
	certFile := filepath.Join(dir, "certificate.json")
	os.WriteFile(certFile, body, 0o644)
	canon, err := ledger.Canonicalize(body)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	id := hex.EncodeToString(sum[:])

	for _, args := range [][]string{{"cert", "anchor"}, {"cert", "anchor", certFile}, {"cert", "anchor", "--authorization", "x"}, {"cert", "stamp"}} {
		if code, _, _ := cli(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, errOut := cli(t, "ledger", "append", "--data", data, "--content", src, "--kind", gate.CertificateKind, "--payload-file", certFile); code != exitUsage ||
		!strings.Contains(errOut, "cert anchor") {
		t.Errorf("ledger append of a certificate block: exit %d %s", code, errOut)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format":"proofsite.certificate/v1"}`), 0o644)

	head := chainHead(t, data, src)
	now := time.Now().UTC().Truncate(time.Second)
	auth := func(payload string) string {
		return signAuthorization(t, key, map[string]any{"action": "CERT_ANCHOR", "authorization_id": "cert-" + payload[:8],
			"scope": []string{"certificate:" + id}, "payload_sha256": payload, "key_id": keyID,
			"issued_at": now.Add(-time.Minute).Format(time.RFC3339), "expires_at": now.Add(time.Hour).Format(time.RFC3339)})
	}
	anchor := func(authFile, file string) (int, string, string) {
		return cli(t, "cert", "anchor", "--data", data, "--content", src, "--authorization", authFile, file)
	}
	other := auth(strings.Repeat("0", 64))
	for _, tc := range []struct{ auth, file, want string }{
		{other, bad, "member"},
		{other, certFile, "denied CERT_ANCHOR"},
	} {
		if code, out, errOut := anchor(tc.auth, tc.file); code != exitFailure || !strings.Contains(errOut, tc.want) {
			t.Errorf("exit %d, want %d naming %q:\n%s%s", code, exitFailure, tc.want, out, errOut)
		}
		if chainHead(t, data, src).Hash() != head.Hash() {
			t.Fatal("a refused anchoring changed the chain")
		}
	}
	good := auth(id)
	code, out, errOut := anchor(good, certFile)
	if code != exitOK || !strings.Contains(out, "certificate "+id+" anchored at block") {
		t.Fatalf("anchor: exit %d\n%s%s", code, out, errOut)
	}
	b := chainHead(t, data, src)
	if b.Index() != head.Index()+1 || b.Header().Kind != gate.CertificateKind || b.Header().PayloadHash.String() != id {
		t.Errorf("the new block: %+v", b.Header())
	}
	if code, _, errOut := anchor(good, certFile); code != exitFailure || !strings.Contains(errOut, "already anchored") {
		t.Errorf("anchoring twice: exit %d %s", code, errOut)
	}
	if v := chainVerdict(t, data, src); !v.Pass() {
		t.Errorf("the chain no longer verifies: %s", v.Verdict)
	}
}
