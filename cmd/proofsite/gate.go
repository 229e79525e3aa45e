package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/gate"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/site/content"
)

const (
	gateSynopsis  = "keygen|sign|check|demo [flags]"
	gateSummaries = `Subcommands:
  keygen    make a Bridge key pair: --out FILE (private key, mode 0600; keep it offline); prints the public key to pin
  sign      sign an authorization with the Bridge key: --key FILE AUTH.json; the signed artifact goes to stdout
  check     ask the checkpoint: --action A [--authorization FILE] [--scope S]... [--payload FILE] [--json];
            exit 0 only on ALLOW, 1 on DENY
  demo      print the demo transcript (the same bytes as /products/gate/demo_output.txt)

The policy and the pinned Bridge public keys come from the gate section of
--content's site.yaml. The Bridge private key never belongs on the server:
run keygen and sign on the Bridge's own machine.
`
)

// errDenied is returned when the checkpoint answered DENY; the evaluation
// has been printed.
var errDenied = errors.New("gate: DENY")

func runGate(ctx context.Context, env *environment, args []string) error {
	return dispatch(ctx, env, "gate", gateSynopsis+"\n\n"+gateSummaries, []subcommand{
		{"keygen", runGateKeygen}, {"sign", runGateSign}, {"check", runGateCheck}, {"demo", runGateDemo},
	}, args)
}

func runGateKeygen(_ context.Context, env *environment, args []string) error {
	var out string
	fs := newFlagSet(env, "gate keygen", "--out FILE")
	fs.StringVar(&out, "out", "", "write the private key to `FILE` (PKCS #8 PEM, mode 0600); an existing file is never overwritten (required)")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if out == "" {
		return usagef("--out is required")
	}
	k, err := ledger.GenerateKey(nil)
	if err != nil {
		return err
	}
	if err := keystore.WritePrivateKey(out, k); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s exists; refusing to overwrite a key", out)
		}
		return err
	}
	fmt.Fprintf(env.stdout, "key_id      %s\npublic_key  %s\nprivate key %s (mode 0600: keep it on the Bridge's machine, offline)\n\n", k.ID(), k.Public(), out)
	fmt.Fprintf(env.stdout, "Pin the public key in content/site.yaml:\n\ngate:\n  bridge_keys:\n    - key_id: %s\n      public_key: %s\n", k.ID(), k.Public())
	return nil
}

func runGateSign(_ context.Context, env *environment, args []string) error {
	var keyFile string
	fs := newFlagSet(env, "gate sign", "--key FILE AUTH.json")
	fs.StringVar(&keyFile, "key", "", "the Bridge's private key `FILE` from gate keygen (required)")
	if err := parseFlags(fs, args, 1); err != nil {
		return err
	}
	if keyFile == "" || fs.NArg() != 1 {
		return usagef("--key and one authorization file (- for stdin) are required")
	}
	key, err := keystore.ReadPrivateKey(keyFile)
	if err != nil {
		return err
	}
	data, err := readInput(env, fs.Arg(0), gate.MaxAuthorizationSize)
	if err != nil {
		return err
	}
	a, err := gate.ParseUnsigned(data)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	signed, err := gate.Sign(a, key)
	if err != nil {
		return err
	}
	if !a.ExpiresAt.After(time.Now()) {
		fmt.Fprintf(env.stderr, "warning: this authorization expired at %s; the gate will deny it\n", a.ExpiresAt.Format(gate.TimeFormat))
	}
	_, err = fmt.Fprintf(env.stdout, "%s\n", signed)
	return err
}

// readInput reads a file, or stdin for "-", up to limit bytes.
func readInput(env *environment, name string, limit int64) ([]byte, error) {
	var r io.Reader = env.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return data, nil
}

// stringList is a flag that may be repeated.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func runGateCheck(_ context.Context, env *environment, args []string) error {
	var action, authFile, payloadFile, payloadHex, at string
	var scope stringList
	var exact, asJSON bool
	fs := newFlagSet(env, "gate check", "--action A [--authorization FILE] [--scope S]... [--payload FILE | --payload-sha256 HEX] [--json]")
	fs.StringVar(&action, "action", "", "the action class to check, e.g. PUBLIC_CLAIM_CHANGE (required)")
	fs.StringVar(&authFile, "authorization", "", "the signed authorization `FILE` (gate sign output); none: deny by default")
	fs.Var(&scope, "scope", "an `item` the action touches (a claim name or a file); repeat for several")
	fs.BoolVar(&exact, "exact-scope", false, "require the authorization's scope to equal the --scope items, not just cover them")
	fs.StringVar(&payloadFile, "payload", "", "the payload `FILE` the action applies to; its SHA-256 must be the authorization's payload_sha256")
	fs.StringVar(&payloadHex, "payload-sha256", "", "the payload's SHA-256 in hex, instead of --payload")
	fs.BoolVar(&asJSON, "json", false, "print the evaluation as JSON (branch on decision and errors[].code)")
	cf := registerConfig(fs, "gate check") // --content: its site.yaml holds the policy and the pinned Bridge keys
	fs.StringVar(&at, "time", "", "evaluate at this RFC 3339 time instead of now")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if action == "" {
		return usagef("--action is required")
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	if payloadFile != "" && payloadHex != "" {
		return usagef("give --payload or --payload-sha256, not both")
	}
	req := gate.Request{Action: gate.Action(action), Scope: scope, ExactScope: exact, Now: time.Now()}
	if at != "" {
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return usagef("--time: %v", err)
		}
		req.Now = t
	}
	switch {
	case payloadHex != "":
		h, err := ledger.ParseHash(strings.ToLower(payloadHex))
		if err != nil {
			return usagef("--payload-sha256: want 64 hex digits")
		}
		req.PayloadSHA256 = h
	case payloadFile != "":
		data, err := os.ReadFile(payloadFile)
		if err != nil {
			return err
		}
		req.PayloadSHA256 = sha256.Sum256(data)
	}
	if authFile != "" {
		data, err := readInput(env, authFile, gate.MaxAuthorizationSize)
		if err != nil {
			return err
		}
		req.Authorization = data
	}
	ch, err := cfg.loadCharter()
	if err != nil {
		return configError(env, cfg.Content, err)
	}
	policy, err := chain.Policy(ch)
	if err != nil {
		return err
	}
	ev := policy.Evaluate(req)
	if asJSON {
		data, err := json.MarshalIndent(ev, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "%s\n", data)
	} else if err := ev.WriteText(env.stdout); err != nil {
		return err
	}
	if !ev.Allowed() {
		return fmt.Errorf("%w: %v", errDenied, ev.Err())
	}
	return nil
}

func runGateDemo(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "gate demo", "[--content DIR]")
	cf := registerConfig(fs, "gate demo") // --content: its site.yaml holds the policy and the board
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	ch, err := cfg.loadCharter()
	if err != nil {
		return configError(env, cfg.Content, err)
	}
	out, err := chain.Demo(ch, content.ConfigFile)
	if err != nil {
		return err
	}
	_, err = env.stdout.Write(out)
	return err
}
