package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/ledger/witness"
)

// Files of a witness's folder.
const (
	witnessKeyFile   = "witness.pem" // its own private key, generated on first start
	witnessStateFile = "state.json"  // per log, what it last cosigned
)

func runWitness(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "witness", "--name NAME --log KEYS.json [--log ...] [--data DIR] [--addr HOST:PORT]")
	name := fs.String("name", "", "the witness's key name, e.g. witness.example.org/w1 (required)")
	dir := fs.String("data", "witness-data", "the witness's own `folder`: its private key ("+witnessKeyFile+", generated on first start) and its state ("+witnessStateFile+")")
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	var logFiles []string
	fs.Func("log", "a log to witness: its trust document `FILE` (the host's /keys.json), whose log origin and checkpoint key are pinned (repeatable)", func(s string) error {
		logFiles = append(logFiles, s)
		return nil
	})
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if *name == "" || strings.ContainsAny(*name, "+ \t\n") || len(logFiles) == 0 {
		return usagef("--name (no spaces or '+') and at least one --log are required")
	}
	logs := map[string]string{}
	for _, f := range logFiles {
		doc, _, err := chain.ReadTrustFile(f)
		if err != nil {
			return usagef("--log %s: %v", f, err)
		}
		if doc.Log.Origin == "" || doc.Log.CheckpointKey == "" {
			return usagef("--log %s: the trust document names no log origin and checkpoint key", f)
		}
		logs[doc.Log.Origin] = doc.Log.CheckpointKey
	}
	key, created, err := witnessKey(filepath.Join(*dir, witnessKeyFile))
	if err != nil {
		return err
	}
	w, err := witness.New(witness.Options{Name: *name, Key: key.Ed25519(), StateFile: filepath.Join(*dir, witnessStateFile), Logs: logs, Logger: env.logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(env.stdout, "proofsite witness: generated the witness key in %s\n", filepath.Join(*dir, witnessKeyFile))
	}
	fmt.Fprintf(env.stdout, "proofsite witness: verifier key %s\n", w.VerifierKey())
	for origin := range logs {
		fmt.Fprintf(env.stdout, "proofsite witness: witnessing %s\n", origin)
	}
	fmt.Fprintf(env.stdout, "proofsite witness: listening on http://%s/ (POST /%s)\n", ln.Addr(), witness.AddCheckpointPath)
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	drain, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(drain)
}

// witnessKey reads the witness's key, generating it (0600, in a 0700
// folder) on first start.
func witnessKey(path string) (ledger.PrivateKey, bool, error) {
	key, err := keystore.ReadPrivateKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	if key, err = ledger.GenerateKey(nil); err != nil {
		return key, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return key, false, err
	}
	return key, true, keystore.WritePrivateKey(path, key)
}
