package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startWitness runs "proofsite witness" on 127.0.0.1:0 for the log of
// keysFile and returns its URL and cosignature verifier key.
func startWitness(t *testing.T, bin, name, keysFile string) (url, vkey string) {
	t.Helper()
	cmd := exec.Command(bin, "witness", "--name", name, "--data", filepath.Join(t.TempDir(), "witness"), "--log", keysFile, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	keyc, urlc := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		key, listen := regexp.MustCompile(`verifier key (\S+)`), regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := key.FindStringSubmatch(sc.Text()); m != nil {
				keyc <- m[1]
			}
			if m := listen.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	for _, into := range []*string{&vkey, &url} {
		c := keyc
		if into == &url {
			c = urlc
		}
		select {
		case *into = <-c:
		case <-time.After(30 * time.Second):
			t.Fatalf("the witness did not start:\n%s", stderr.String())
		}
	}
	return url, vkey
}

// A second party runs "proofsite witness"; serve submits its checkpoint
// to it and publishes the cosignature with the tiles; verify-ledger
// requires cosignatures from the witness keys it pins, over real HTTP.
func TestLogWitnessEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	proofsite, verifier := buildBinaries(t)
	data := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command(proofsite, "ledger", "init", "--content", realContent, "--data", data).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	keys := filepath.Join(data, "keys.json")
	url, vkey := startWitness(t, proofsite, "witness.test/w1", keys)
	_, otherKey := startWitness(t, proofsite, "witness.test/w2", keys) // pinned by the auditor, never asked by the log
	srv := startServe(t, proofsite, "--content", realContent, "--public", filepath.Join(t.TempDir(), "public"), "--data", data,
		"--log-witness", url+"="+vkey)

	resp, body := srv.get(t, "/ledger/checkpoint")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "\n\u2014 witness.test/w1 ") {
		t.Fatalf("the published checkpoint carries no cosignature:\n%s\n%s", body, srv.stderr.String())
	}
	verify := func(args ...string) (int, string) {
		t.Helper()
		out, err := exec.Command(verifier, append([]string{"--tiles", "--keys", keys}, append(args, srv.base+"/ledger/")...)...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	for _, c := range []struct {
		args    []string
		code    int
		verdict string
	}{
		{[]string{"--cosigner", vkey}, 0, "VERDICT PASS_WITH_DOCUMENTED_STRICT_SEAM"},
		{[]string{"--cosigner", vkey, "--cosigner", otherKey}, 1, "VERDICT FAIL_CHECKPOINT_INVALID"},
		{[]string{"--cosigner", vkey, "--cosigner", otherKey, "--cosignatures", "1"}, 0, "VERDICT PASS_WITH_DOCUMENTED_STRICT_SEAM"},
		{[]string{"--cosigner", otherKey}, 1, "VERDICT FAIL_CHECKPOINT_INVALID"},
		{[]string{"--cosigner", "witness.test/w1+00000000+AAAA"}, 64, ""},
	} {
		code, out := verify(c.args...)
		if code != c.code || !strings.HasPrefix(out, c.verdict) {
			t.Errorf("%v: exit %d\n%s", c.args, code, out)
		}
	}
}
