package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/gate"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/site/content"
)

// bridgeKey makes a Bridge key with "gate keygen" and returns the key file
// and the printed key id and public key.
func bridgeKey(t *testing.T) (file, keyID, public string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "bridge.pem")
	code, out, errOut := cli(t, "gate", "keygen", "--out", file)
	if code != 0 {
		t.Fatalf("keygen: exit %d %s", code, errOut)
	}
	m := regexp.MustCompile(`(?m)^key_id +(\S+)\npublic_key +(\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("keygen output:\n%s", out)
	}
	return file, m[1], m[2]
}

// pinBridgeKey replaces the Bridge key pinned in dir's site.yaml.
func pinBridgeKey(t *testing.T, dir, keyID, public string) {
	t.Helper()
	path := filepath.Join(dir, "site.yaml")
	src, _ := os.ReadFile(path)
	keys := regexp.MustCompile(`(?m)^    - key_id: ed25519:[0-9a-f]+\n      public_key: [0-9a-f]+\n`)
	if len(keys.FindAll(src, -1)) != 1 {
		t.Fatal("site.yaml does not pin exactly one Bridge key")
	}
	src = keys.ReplaceAll(src, []byte("    - key_id: "+keyID+"\n      public_key: "+public+"\n"))
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
}

// editFile replaces old with new in a content file.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(src, []byte(old)) {
		t.Fatalf("%s has no %q (%v)", path, old, err)
	}
	if err := os.WriteFile(path, bytes.Replace(src, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// signAuthorization writes an unsigned authorization and signs it with
// "gate sign", returning the signed artifact's file.
func signAuthorization(t *testing.T, key string, auth map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	unsigned := filepath.Join(dir, "auth.json")
	data, _ := json.MarshalIndent(auth, "", "  ")
	os.WriteFile(unsigned, data, 0o644)
	code, out, errOut := cli(t, "gate", "sign", "--key", key, unsigned)
	if code != 0 {
		t.Fatalf("sign: exit %d %s", code, errOut)
	}
	signed := filepath.Join(dir, "signed.json")
	os.WriteFile(signed, []byte(out), 0o644)
	return signed
}

// draftFrom reads the example authorization a refused publish prints.
func draftFrom(t *testing.T, stderr string) map[string]any {
	t.Helper()
	line := regexp.MustCompile(`(?m)^  (\{"action":"PUBLIC_CLAIM_CHANGE".*\})$`).FindStringSubmatch(stderr)
	if line == nil {
		t.Fatalf("no draft authorization in:\n%s", stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line[1]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// chainHead returns the stored head, without a full walk.
func chainHead(t *testing.T, data, contentDir string) ledger.Block {
	t.Helper()
	ch, err := content.LoadCharter(os.DirFS(contentDir))
	if err != nil {
		t.Fatal(err)
	}
	c, err := chain.Open(chain.Options{DataDir: data, Seams: ch.Ledger.Seams(), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.Store().Head()
}

// chainVerdict verifies the chain with "ledger verify" and returns its
// verdict.
func chainVerdict(t *testing.T, data, contentDir string) ledger.Verdict {
	t.Helper()
	code, out, errOut := cli(t, "ledger", "verify", "--json", "--data", data, "--content", contentDir)
	if code != 0 {
		t.Fatalf("ledger verify: exit %d\n%s%s", code, out, errOut)
	}
	var v ledger.Verdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The acceptance test of the publish rule, through run: a claim change
// without authorization is refused and changes nothing; with a valid Bridge
// authorization it publishes and the gate-decision block verifies on the
// canonical spine; replaying an authorization for another change is
// refused.
func TestGatePublishEndToEnd(t *testing.T) {
	t.Parallel()
	key, keyID, public := bridgeKey(t)
	src := copyContent(t, func(dir string) { pinBridgeKey(t, dir, keyID, public) })
	data := initLedger(t, src)
	out := filepath.Join(t.TempDir(), "public")
	publish := func(auth string) (int, string, string) {
		args := []string{"build", "--publish", "--content", src, "--out", out, "--data", data}
		if auth != "" {
			args = append(args, "--authorization", auth)
		}
		return cli(t, args...)
	}
	head0 := chainHead(t, data, src)
	now := time.Now().UTC().Truncate(time.Second)
	window := func(m map[string]any) map[string]any {
		m["issued_at"] = now.Add(-time.Minute).Format(time.RFC3339)
		m["expires_at"] = now.Add(time.Hour).Format(time.RFC3339)
		return m
	}

	// A plain build is a preview: it works and changes no chain.
	if code, _, errOut := cli(t, "build", "--content", src, "--out", out, "--data", data); code != 0 {
		t.Fatalf("plain build: %s", errOut)
	}
	os.RemoveAll(out)

	// First publish: nothing is recorded, so every claim counts as changed
	// and needs an authorization.
	code, stdout, stderr := publish("")
	if code != exitFailure || !strings.Contains(stderr, "publish refused") || !strings.Contains(stderr, "first publish") ||
		!strings.Contains(stderr, "changed  capability.maturity") || !strings.Contains(stderr, "changed  gate.bridge_keys") ||
		!strings.Contains(stderr, "changed  file:products/gate/README.md") || !strings.Contains(stderr, "Nothing was written") {
		t.Fatalf("first publish without authorization: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a refused publish wrote the output")
	}
	if chainHead(t, data, src).Hash() != head0.Hash() {
		t.Fatal("a refused publish changed the chain")
	}
	first := signAuthorization(t, key, window(draftFrom(t, stderr)))
	code, stdout, stderr = publish(first)
	if code != exitOK || !strings.Contains(stdout, "gate decision ALLOW under authorization publish-") {
		t.Fatalf("first publish: exit %d\n%s%s", code, stdout, stderr)
	}
	v1 := chainVerdict(t, data, src)
	if v1.Head.Index != head0.Index()+1 || !v1.Pass() {
		t.Fatalf("after the first publish: %+v", v1.Head)
	}
	demo, err := os.ReadFile(filepath.Join(out, demoArtifactPath))
	if err != nil {
		t.Fatal(err)
	}
	readme, _ := os.ReadFile(filepath.Join(out, "products/gate/README.md"))

	// Unchanged claims: no authorization needed, nothing appended.
	code, stdout, stderr = publish("")
	if code != exitOK || !strings.Contains(stdout, "unchanged since block") {
		t.Fatalf("republish: exit %d\n%s%s", code, stdout, stderr)
	}
	if chainHead(t, data, src).Hash() != v1.Head.Hash {
		t.Fatal("an unchanged publish appended")
	}

	// A claim change without authorization: refused, chain and output
	// unchanged.
	editFile(t, filepath.Join(src, "products/gate/README.md"), "Three properties carry the design:", "Three properties carry the whole design:")
	code, stdout, stderr = publish("")
	if code != exitFailure || !strings.Contains(stderr, "1 public claim(s) changed; compared with the claims recorded at block") ||
		!strings.Contains(stderr, "changed  file:products/gate/README.md\n") || strings.Contains(stderr, "changed  capability") {
		t.Fatalf("change without authorization: exit %d\n%s%s", code, stdout, stderr)
	}
	if chainHead(t, data, src).Hash() != v1.Head.Hash {
		t.Fatal("a refused publish changed the chain")
	}
	if now, _ := os.ReadFile(filepath.Join(out, "products/gate/README.md")); !bytes.Equal(now, readme) {
		t.Fatal("a refused publish changed the output")
	}
	draft := draftFrom(t, stderr)

	// Replaying the first authorization for this change: refused.
	code, _, stderr = publish(first)
	for _, want := range []string{"[scope]", "[payload_mismatch]", "[replayed]", "Nothing was written"} {
		if code != exitFailure || !strings.Contains(stderr, want) {
			t.Fatalf("replayed first authorization: exit %d, no %s\n%s", code, want, stderr)
		}
	}

	// Refused too: a scope wider than the change, a key that is not
	// pinned, an expired authorization (each path has its unit test in
	// ledger/gate; these check the wiring).
	wider := window(maps.Clone(draft))
	wider["authorization_id"], wider["scope"] = "wider", []string{"capability.maturity", "file:products/gate/README.md"}
	other, _, _ := bridgeKey(t)
	expired := maps.Clone(draft)
	expired["authorization_id"] = "expired"
	expired["issued_at"], expired["expires_at"] = now.Add(-2*time.Hour).Format(time.RFC3339), now.Add(-time.Hour).Format(time.RFC3339)
	for _, tc := range []struct {
		desc, auth, want string
	}{
		{"scope wider than the change", signAuthorization(t, key, wider), "[scope]"},
		{"not a pinned key", signAuthorization(t, other, window(maps.Clone(draft))), "[wrong_key]"},
		{"expired", signAuthorization(t, key, expired), "[expired]"},
	} {
		if code, _, stderr := publish(tc.auth); code != exitFailure || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d\n%s", tc.desc, code, stderr)
		}
	}

	// With a valid authorization for exactly this change: published, and
	// the gate-decision block is on the canonical spine.
	second := signAuthorization(t, key, window(maps.Clone(draft)))
	code, stdout, stderr = publish(second)
	if code != exitOK || !strings.Contains(stdout, "recorded at block") {
		t.Fatalf("second publish: exit %d\n%s%s", code, stdout, stderr)
	}
	v2 := chainVerdict(t, data, src)
	if v2.Head.Index != v1.Head.Index+1 || !v2.CanonicalSpineValid || slices.Contains(v2.OffSpineRows, v2.Head.Index) ||
		v2.SpineLength != v1.SpineLength+1 || v2.Verdict != ledger.VerdictPassWithSeam {
		t.Fatalf("after the second publish: %+v", v2)
	}
	if now, _ := os.ReadFile(filepath.Join(out, "products/gate/README.md")); bytes.Equal(now, readme) {
		t.Fatal("the published change is not in the output")
	}
	if again, _ := os.ReadFile(filepath.Join(out, demoArtifactPath)); !bytes.Equal(again, demo) {
		t.Fatal("the demo transcript changed although its inputs did not")
	}

	// Another claim change: replaying the second authorization, for a
	// different scope, is refused, and so is a content edit that pins its
	// own key to sign with (the recorded policy is the one in effect).
	editFile(t, filepath.Join(src, "site.yaml"), "tampering is rejected.", "tampering is always rejected.")
	code, _, stderr = publish(second)
	if code != exitFailure || !strings.Contains(stderr, "changed  capability.bridge_auth\n") ||
		!strings.Contains(stderr, "[scope]") || !strings.Contains(stderr, "[replayed]") {
		t.Fatalf("replayed second authorization: exit %d\n%s", code, stderr)
	}
	intruder, intruderID, intruderPublic := bridgeKey(t)
	pinBridgeKey(t, src, intruderID, intruderPublic)
	_, _, stderr = publish("")
	self := window(draftFrom(t, stderr))
	code, _, stderr = publish(signAuthorization(t, intruder, self))
	if code != exitFailure || !strings.Contains(stderr, "[wrong_key]") || !strings.Contains(stderr, "changed  gate.bridge_keys") {
		t.Fatalf("self-pinned key: exit %d\n%s", code, stderr)
	}
	// The Bridge key recorded on the chain can authorize the rotation.
	code, stdout, stderr = publish(signAuthorization(t, key, self))
	if code != exitOK {
		t.Fatalf("key rotation authorized by the recorded key: exit %d\n%s%s", code, stdout, stderr)
	}
	if v := chainVerdict(t, data, src); v.Head.Index != v2.Head.Index+1 || !v.Pass() {
		t.Fatalf("after the rotation: %+v", v.Head)
	}

	// --authorization without --publish is a usage error.
	if code, _, _ := cli(t, "build", "--content", src, "--out", out, "--authorization", second); code != exitUsage {
		t.Errorf("--authorization alone: exit %d", code)
	}
}

func TestGatePublishNeedsChain(t *testing.T) {
	out := filepath.Join(t.TempDir(), "public")
	code, _, stderr := cli(t, "build", "--publish", "--content", realContent, "--out", out, "--data", filepath.Join(t.TempDir(), "none"))
	if code != exitFailure || !strings.Contains(stderr, "publish refused") || !strings.Contains(stderr, "ledger init") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("wrote the output")
	}
}

func TestGateKeygen(t *testing.T) {
	file, keyID, public := bridgeKey(t)
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v %v", fi.Mode(), err)
	}
	k, err := keystore.ReadPrivateKey(file)
	if err != nil || string(k.ID()) != keyID || k.Public().String() != public {
		t.Fatalf("key %v %v", k.ID(), err)
	}
	before, _ := os.ReadFile(file)
	if code, _, stderr := cli(t, "gate", "keygen", "--out", file); code != exitFailure || !strings.Contains(stderr, "refusing to overwrite") {
		t.Errorf("overwrite: exit %d %s", code, stderr)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Error("the key was overwritten")
	}
}

func TestGateUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"gate"}, "missing subcommand"},
		{[]string{"gate", "launch"}, `unknown subcommand "launch"`},
		{[]string{"gate", "keygen"}, "--out is required"},
		{[]string{"gate", "sign", "--key", "k"}, "--key and one authorization file"},
		{[]string{"gate", "sign", "a.json"}, "--key and one authorization file"},
		{[]string{"gate", "check"}, "--action is required"},
		{[]string{"gate", "check", "--action", "X", "--payload", "f", "--payload-sha256", "00"}, "not both"},
		{[]string{"gate", "check", "--action", "X", "--payload-sha256", "zz"}, "64 hex digits"},
		{[]string{"gate", "check", "--action", "X", "--time", "noon"}, "--time"},
		{[]string{"gate", "demo", "extra"}, `unexpected argument "extra"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := cli(t, tc.args...)
			if code != exitUsage || !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, stdout+stderr, exitUsage, tc.want)
			}
		})
	}
	if code, stdout, _ := cli(t, "gate", "help"); code != exitOK || !strings.Contains(stdout, "keygen|sign|check|demo") {
		t.Errorf("help: %d %s", code, stdout)
	}
}

func TestGateSignCheck(t *testing.T) {
	key, keyID, public := bridgeKey(t)
	src := copyContent(t, func(dir string) { pinBridgeKey(t, dir, keyID, public) })
	payload := filepath.Join(t.TempDir(), "payload.txt")
	os.WriteFile(payload, []byte("send the quarterly report"), 0o644)
	now := time.Now().UTC().Truncate(time.Second)
	sum, _ := os.ReadFile(payload)
	auth := map[string]any{
		"authorization_id": "send-1", "action": "EXTERNAL_SEND", "scope": []string{"recipient:auditor"},
		"issued_at": now.Add(-time.Minute).Format(time.RFC3339), "expires_at": now.Add(time.Hour).Format(time.RFC3339),
		"payload_sha256": sha256Hex(sum),
	}
	signed := signAuthorization(t, key, auth)
	raw, _ := os.ReadFile(signed)
	if _, err := gate.Verify(bytes.TrimSpace(raw), gate.NewKeys(mustPub(t, public))); err != nil {
		t.Fatalf("gate sign output does not verify: %v\n%s", err, raw)
	}
	tampered := filepath.Join(t.TempDir(), "tampered.json")
	os.WriteFile(tampered, bytes.Replace(raw, []byte("recipient:auditor"), []byte("recipient:anyone"), 1), 0o644)

	check := func(args ...string) (int, string, string) {
		return cli(t, append([]string{"gate", "check", "--content", src}, args...)...)
	}
	tests := []struct {
		desc string
		args []string
		code int
		want string
	}{
		{"allow", []string{"--action", "EXTERNAL_SEND", "--authorization", signed, "--scope", "recipient:auditor", "--payload", payload}, exitOK, "decision   ALLOW"},
		{"no authorization", []string{"--action", "EXTERNAL_SEND", "--scope", "recipient:auditor", "--payload", payload}, exitFailure, "[no_authorization]"},
		{"tampered", []string{"--action", "EXTERNAL_SEND", "--authorization", tampered, "--scope", "recipient:anyone", "--payload", payload}, exitFailure, "[tampered]"},
		{"unknown action", []string{"--action", "LAUNCH", "--authorization", signed}, exitFailure, "[unknown_action]"},
		{"HARD_DELETE", []string{"--action", "HARD_DELETE"}, exitFailure, "[denied_action]"},
		{"another scope", []string{"--action", "EXTERNAL_SEND", "--authorization", signed, "--scope", "recipient:press", "--payload", payload}, exitFailure, "[scope]"},
		{"no payload", []string{"--action", "EXTERNAL_SEND", "--authorization", signed, "--scope", "recipient:auditor"}, exitFailure, "[payload_mismatch]"},
		{"expired", []string{"--action", "EXTERNAL_SEND", "--authorization", signed, "--payload", payload, "--time", now.Add(2 * time.Hour).Format(time.RFC3339)}, exitFailure, "[expired]"},
		{"not yet valid", []string{"--action", "EXTERNAL_SEND", "--authorization", signed, "--payload", payload, "--time", now.Add(-time.Hour).Format(time.RFC3339)}, exitFailure, "[not_yet_valid]"},
		{"payload as a hash", []string{"--action", "EXTERNAL_SEND", "--authorization", signed, "--payload-sha256", sha256Hex(sum)}, exitOK, "decision   ALLOW"},
		{"exact scope", []string{"--action", "EXTERNAL_SEND", "--authorization", signed, "--payload", payload, "--exact-scope"}, exitFailure, "[scope]"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			code, stdout, stderr := check(tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.want) {
				t.Errorf("exit %d (want %d)\n%s%s", code, tc.code, stdout, stderr)
			}
		})
	}

	// JSON for orchestrators: decision, board and error codes.
	code, stdout, _ := check("--json", "--action", "EXTERNAL_SEND", "--authorization", tampered, "--payload", payload)
	var ev struct {
		Decision string `json:"decision"`
		Board    []struct {
			Control, State string
		} `json:"board"`
		Errors []struct{ Code string } `json:"errors"`
	}
	if err := json.Unmarshal([]byte(stdout), &ev); err != nil || code != exitFailure || ev.Decision != "DENY" ||
		len(ev.Errors) != 1 || ev.Errors[0].Code != "tampered" || len(ev.Board) != 3 || ev.Board[1].State != "UNVERIFIABLE" {
		t.Errorf("json: exit %d %v\n%s", code, err, stdout)
	}
	code, stdout, _ = check("--json", "--action", "EXTERNAL_SEND", "--authorization", signed, "--payload", payload)
	if code != exitOK || !strings.Contains(stdout, `"decision": "ALLOW"`) {
		t.Errorf("json allow: exit %d\n%s", code, stdout)
	}

	// The key file must be private.
	os.Chmod(key, 0o644)
	if code, _, stderr := cli(t, "gate", "sign", "--key", key, signed); code != exitFailure || !strings.Contains(stderr, "readable by others") {
		t.Errorf("world-readable key: exit %d %s", code, stderr)
	}
	os.Chmod(key, 0o600)
	// Signing input is strict.
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"authorization_id":"x","action":"EXTERNAL_SEND","action":"HARD_DELETE"}`), 0o644)
	if code, _, stderr := cli(t, "gate", "sign", "--key", key, bad); code != exitFailure || !strings.Contains(stderr, "duplicate") {
		t.Errorf("duplicate member: exit %d %s", code, stderr)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func mustPub(t *testing.T, hex string) ledger.PublicKey {
	t.Helper()
	k, err := ledger.ParsePublicKeyHex(hex)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestGateDemo: "proofsite gate demo" and the built
// public/products/gate/demo_output.txt are the same bytes, produced by the
// checkpoint (rebuilt here and compared), with the four sections, and the
// artifact printed in it verifies with the demo key only.
func TestGateDemo(t *testing.T) {
	code, demo, stderr := cli(t, "gate", "demo", "--content", realContent)
	if code != exitOK {
		t.Fatalf("gate demo: exit %d %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "public")
	if code, _, stderr := cli(t, "build", "--content", realContent, "--out", out, "--data", filepath.Join(t.TempDir(), "none")); code != exitOK {
		t.Fatalf("build: %s", stderr)
	}
	built, err := os.ReadFile(filepath.Join(out, demoArtifactPath))
	if err != nil {
		t.Fatal(err)
	}
	if string(built) != demo {
		t.Fatal("the built transcript differs from gate demo")
	}
	cfg, err := content.LoadCharter(os.DirFS(realContent))
	if err != nil {
		t.Fatal(err)
	}
	again, err := chain.Demo(cfg, content.ConfigFile)
	if err != nil || !bytes.Equal(again, built) {
		t.Fatalf("rerunning the checkpoint gives other bytes (%v)", err)
	}
	last := -1
	for _, s := range []string{"1. DENY BY DEFAULT", "2. ALLOW WITH A BRIDGE AUTHORIZATION", "3. TAMPER REJECTION", "4. THE CAPABILITY BOARD"} {
		i := strings.Index(demo, "\n"+s+"\n")
		if i < last {
			t.Fatalf("section %q missing or out of order", s)
		}
		last = i
	}
	for _, c := range cfg.Capabilities {
		if !regexp.MustCompile(`(?m)^  ` + c.Key + ` +` + c.Value + `$`).MatchString(demo) {
			t.Errorf("the board row %s %s is not in the transcript", c.Key, c.Value)
		}
	}
	for _, k := range cfg.Gate.BridgeKeys {
		if !strings.Contains(demo, k.KeyID) {
			t.Errorf("the pinned Bridge key %s is not named", k.KeyID)
		}
	}
	_, after, _ := strings.Cut(demo, "The signed artifact, as \"proofsite gate sign\" prints it:\n")
	artifact, _, _ := strings.Cut(after, "\n")
	a, err := gate.Verify([]byte(artifact), gate.NewKeys(gate.DemoKey().Public()))
	if err != nil || a.KeyID != gate.DemoKeyID() {
		t.Fatalf("the transcript's artifact does not verify with the demo key: %v", err)
	}
	policy, err := chain.Policy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ev := policy.Evaluate(gate.Request{Action: a.Action, Scope: a.Scope, PayloadSHA256: a.PayloadSHA256, Authorization: []byte(artifact), Now: gate.DemoClock})
	if ev.Allowed() || !strings.Contains(ev.Err().Error(), "authorizes nothing outside the demo") {
		t.Fatalf("the site's checkpoint accepts the demo key: %v", ev.Err())
	}
}
