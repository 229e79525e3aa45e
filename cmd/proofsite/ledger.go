package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/gate"
)

const (
	progressEvery   = time.Second
	ledgerSynopsis  = "init|append|verify|export [flags]"
	ledgerSummaries = `Subcommands:
  init      import content/ledger/history.jsonl, signed with this instance's keys (generated on first run)
  append    append one block: --kind K --payload-file F [--description D]
  verify    full verification of the store, or of an export with --file; exit 0 on a pass, 1 on a fail
  export    write the chain as JSONL (metadata only; --private adds descriptions and payloads)

The chain, its published keys (keys.json) and the writer key (keys/) live in
--data; the witness keys in --witness-keys (default DATA/witness-keys).
`
)

// errVerifyFailed is returned when verification ran and the verdict is not a
// pass; the verdict itself has been printed.
var errVerifyFailed = errors.New("verification failed")

func runLedger(ctx context.Context, env *environment, args []string) error {
	return dispatch(ctx, env, "ledger", ledgerSynopsis+"\n\n"+ledgerSummaries, []subcommand{
		{"init", runLedgerInit}, {"append", runLedgerAppend}, {"verify", runLedgerVerify}, {"export", runLedgerExport},
	}, args)
}

// openChain opens the chain of cfg with the seams of its site.yaml.
func openChain(env *environment, cfg *config, readOnly bool) (*chain.Chain, error) {
	opts, err := ledgerOptions(env, cfg, readOnly)
	if err != nil {
		return nil, err
	}
	return chain.Open(opts)
}

// ledgerOptions are the chain's options with the seams of cfg's site.yaml.
func ledgerOptions(env *environment, cfg *config, readOnly bool) (chain.Options, error) {
	ch, err := cfg.loadCharter()
	if err != nil {
		return chain.Options{}, configError(env, cfg.Content, err)
	}
	return cfg.chainOptions(env, ch, readOnly)
}

func runLedgerInit(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "ledger init", "[--data DIR] [--witness-keys DIR] [--content DIR]")
	cf := registerConfig(fs, "ledger init")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	opts, err := ledgerOptions(env, cfg, false)
	if err != nil {
		return err
	}
	history, err := os.Open(cfg.historyFile())
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer history.Close()
	rep, err := chain.Init(ctx, opts, history)
	if err != nil {
		return fmt.Errorf("%s: %w", history.Name(), err)
	}
	if rep.Existed {
		fmt.Fprintf(env.stdout, "ledger already initialised in %s (genesis %s)\n", rep.StoreDir, rep.Genesis)
	} else {
		fmt.Fprintf(env.stdout, "initialised the ledger in %s: %d rows from %s\n", rep.StoreDir, rep.Rows, history.Name())
		fmt.Fprintf(env.stdout, "genesis  %s\nhead     %d %s\nverdict  %s\nkeys     %s (public); private keys in %s (writer) and %s (witnesses)\n",
			rep.Genesis, rep.Verdict.Head.Index, rep.Verdict.Head.Hash, rep.Verdict.Verdict, rep.PublicKeys, rep.KeysDir, rep.WitnessDir)
	}
	return publishTiles(ctx, env, opts)
}

// publishTiles verifies the chain and brings its tiles (the C2SP
// tlog-tiles log the build publishes under /ledger/) up to date.
func publishTiles(ctx context.Context, env *environment, opts chain.Options) error {
	c, err := chain.Open(opts)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Walk(ctx); err != nil {
		return err
	}
	if err := c.PublishTiles(ctx); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "tiles    %s (C2SP tlog-tiles of %d rows; the build publishes them under /ledger/)\n", filepath.Join(opts.DataDir, chain.TilesDir), c.Store().Count())
	return nil
}

func runLedgerAppend(ctx context.Context, env *environment, args []string) error {
	var kind, payloadFile, description, at string
	fs := newFlagSet(env, "ledger append", "--kind K --payload-file F [--description D] [--data DIR]")
	cf := registerConfig(fs, "ledger append")
	fs.StringVar(&kind, "kind", "", "block kind, e.g. gate_decision (required)")
	fs.StringVar(&payloadFile, "payload-file", "", "JSON payload file, - for stdin (required); kept private, only its hash is published")
	fs.StringVar(&description, "description", "", "private description of the block")
	fs.StringVar(&at, "time", "", "timestamp, RFC 3339 (default now)")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if kind == "" || payloadFile == "" {
		return usagef("--kind and --payload-file are required")
	}
	if kind == gate.CertificateKind {
		return usagef("--kind %s: a certificate is anchored through the gate only (proofsite cert anchor)", kind)
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	var t time.Time
	if at != "" {
		var err error
		if t, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return usagef("--time: %v", err)
		}
	}
	var payload []byte
	if payloadFile == "-" {
		payload, err = io.ReadAll(env.stdin)
	} else {
		payload, err = os.ReadFile(payloadFile)
	}
	if err != nil {
		return err
	}
	c, err := openChain(env, cfg, false)
	if err != nil {
		return err
	}
	defer c.Close()
	b, err := c.Append(ctx, ledger.Entry{Kind: kind, Payload: payload, Description: description, Time: t})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "appended block %d %s\n", b.Index(), b.Hash())
	return nil
}

func runLedgerVerify(ctx context.Context, env *environment, args []string) error {
	var file, genesis, keysFile, checkpoint, state string
	var quorum int
	var seams []ledger.Seam
	var asJSON bool
	fs := newFlagSet(env, "ledger verify", "[--file EXPORT.jsonl] [--keys FILE] [--seam BLOCK:HASH:PREV]... [--quorum N] [--genesis HASH] [--checkpoint FILE|NOTE] [--state FILE] [--json]")
	cf := registerConfig(fs, "ledger verify")
	fs.StringVar(&file, "file", "", "verify this JSONL export instead of the store (- for stdin)")
	fs.BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	fs.StringVar(&keysFile, "keys", "", "the trust document to pin (keys, genesis, seams, quorum, log), as served at /keys.json (default DATA/keys.json)")
	fs.Func("seam", "also document the seam `BLOCK:HASH:PREV`: the row with that index, hash and prev_hash (repeatable)", func(v string) error {
		sm, err := parseSeamFlag(v)
		seams = append(seams, sm)
		return err
	})
	fs.IntVar(&quorum, "quorum", 0, "distinct pinned witness signatures every block needs (default the trust document's)")
	fs.StringVar(&genesis, "genesis", "", "pinned genesis hash (default the trust document's)")
	fs.StringVar(&checkpoint, "checkpoint", "", "a checkpoint kept from an earlier run: a file, the note text, or SIZE:ROOT; the chain must extend it")
	fs.StringVar(&state, "state", "", "file remembering the last checkpoint: required if present, updated after a pass")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if quorum < 0 {
		return usagef("--quorum: want 1 or more, found %d", quorum)
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	var pinGenesis ledger.Hash
	if genesis != "" {
		if pinGenesis, err = ledger.ParseHash(genesis); err != nil {
			return usagef("--genesis: %v", err)
		}
	}
	cp, err := rememberedCheckpoint(checkpoint, state)
	if err != nil {
		return err
	}
	// The pins: the trust document (the auditor's, or this instance's),
	// with what the flags add. Never the data's own claims.
	defaultKeys := keysFile == ""
	if defaultKeys {
		keysFile = filepath.Join(cfg.Data, chain.KeysFile)
	}
	var trust *ledger.TrustDocument
	switch doc, _, err := chain.ReadTrustFile(keysFile); {
	case err == nil:
		doc.DocumentedSeams = append(doc.DocumentedSeams, seams...)
		if quorum > 0 {
			doc.WitnessQuorum = quorum
		}
		trust = &doc
	case defaultKeys && errors.Is(err, iofs.ErrNotExist):
		// None: an export is checked against its own keys alone; a data
		// folder without it holds no chain (chain.Open says so).
	default:
		return usagef("--keys: %v", err)
	}
	progress := newProgress(env.stderr)
	var v ledger.Verdict
	if file != "" {
		var in io.Reader = env.stdin
		if file != "-" {
			fh, err := os.Open(file)
			if err != nil {
				return err
			}
			defer fh.Close()
			in = fh
		}
		r, err := ledger.NewReader(in)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		opts, err := r.Options(trust)
		if err != nil {
			return err
		}
		if trust == nil {
			opts.Seams, opts.WitnessQuorum = seams, quorum
		}
		opts.Checkpoint, opts.Check = cp, ledger.CheckOptions{Progress: progress.report(-1)}
		if !pinGenesis.IsZero() {
			opts.Genesis = pinGenesis
		}
		res, err := ledger.VerifyRows(r.Rows(), opts)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		v = res.Verdict
	} else {
		opts, err := ledgerOptions(env, cfg, true)
		if err != nil {
			return err
		}
		opts.Trust, opts.Genesis = trust, pinGenesis // zero: the trust document's
		c, err := chain.Open(opts)
		if err != nil {
			return err
		}
		defer c.Close()
		s := c.Store()
		res, err := s.FullWalk(ctx, cp, progress.report(s.Count()))
		if err != nil {
			return err
		}
		v = res.Verdict
	}
	progress.done()
	if err := printVerdict(env.stdout, v, asJSON); err != nil {
		return err
	}
	if state != "" && v.Checkpoint != nil {
		return renameio.WriteFile(state, []byte(v.Checkpoint.String()+"\n"), 0o644)
	}
	return nil
}

// parseSeamFlag reads --seam BLOCK:HASH:PREV.
func parseSeamFlag(v string) (ledger.Seam, error) {
	parts := strings.Split(v, ":")
	if len(parts) == 3 {
		n, err := strconv.ParseInt(parts[0], 10, 64)
		h, herr := ledger.ParseHash(parts[1])
		p, perr := ledger.ParseHash(parts[2])
		if err == nil && herr == nil && perr == nil && n > 0 {
			return ledger.Seam{Block: n, Hash: h, PrevHash: p, Reason: "pinned with --seam"}, nil
		}
	}
	return ledger.Seam{}, fmt.Errorf("want BLOCK:HASH:PREV, the row's index, hash and prev_hash (a seam without its row's hashes documents nothing), found %q", v)
}

// rememberedCheckpoint reads the checkpoint the auditor kept: --checkpoint
// (a file, the note text, or SIZE:ROOT), else the --state file if it
// exists. A checkpoint that cannot be read is a usage error.
func rememberedCheckpoint(arg, state string) (*ledger.Checkpoint, error) {
	text := arg
	if text != "" && !strings.ContainsAny(text, ":\n") {
		data, err := os.ReadFile(text)
		if err != nil {
			return nil, usagef("--checkpoint: %v", err)
		}
		text = string(data)
	}
	if text == "" && state != "" {
		data, err := os.ReadFile(state)
		if err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return nil, usagef("--state: %v", err)
		}
		text = string(data)
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	c, err := ledger.ParseCheckpoint(strings.TrimSpace(text))
	if err != nil {
		return nil, usagef("checkpoint: %v", err)
	}
	return &c, nil
}

// printVerdict prints v and returns errVerifyFailed unless it is a pass.
func printVerdict(w io.Writer, v ledger.Verdict, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
	} else {
		writeVerdictText(w, v)
	}
	if !v.Pass() {
		return fmt.Errorf("%w: %s", errVerifyFailed, v.Verdict)
	}
	return nil
}

func writeVerdictText(w io.Writer, v ledger.Verdict) {
	line := func(k string, val any) { fmt.Fprintf(w, "  %-28s %v\n", k, val) }
	fmt.Fprintf(w, "VERDICT %s\n", v.Verdict)
	line("status", v.Status)
	line("canonical_spine_valid", v.CanonicalSpineValid)
	line("strict_table_valid", v.StrictTableValid)
	if v.StrictTableBreakAtBlock != nil {
		line("strict_table_break_at_block", *v.StrictTableBreakAtBlock)
	} else {
		line("strict_table_break_at_block", "none")
	}
	line("valid (deprecated)", fmt.Sprintf("%v (scope: %s)", v.Valid, v.ValidScope))
	line("rows checked", v.RowsChecked)
	line("spine length", v.SpineLength)
	if len(v.OffSpineRows) > 0 {
		line("off-spine rows", fmt.Sprint(v.OffSpineRows))
	}
	if v.Head != nil {
		line("head", fmt.Sprintf("%d %s", v.Head.Index, v.Head.Hash))
	}
	if v.Genesis != nil {
		pinned := "not pinned"
		if v.GenesisPinned {
			pinned = "pinned"
		}
		line("genesis", fmt.Sprintf("%s (%s)", v.Genesis.Hash, pinned))
	}
	for _, s := range v.DocumentedSeams {
		line("documented seam", fmt.Sprintf("block %d: %s", s.Block, s.Reason))
	}
	if v.CheckpointPinned != nil {
		line("required checkpoint", v.CheckpointPinned.String())
	}
	if v.Checkpoint != nil {
		line("checkpoint", v.Checkpoint.String()+"  (keep it; pass --checkpoint next time to detect truncation or rewrite)")
	}
	if v.LastFullWalkAt != nil {
		line("last_full_walk_at", v.LastFullWalkAt.Format(time.RFC3339))
	}
	if v.Warning != nil {
		fmt.Fprintf(w, "  warning: %s\n", *v.Warning)
	}
	for _, f := range v.Failures {
		fmt.Fprintf(w, "  FAIL %s\n", f)
	}
}

// progress prints how far a long walk has got to stderr, at most once per
// progressEvery; short walks print nothing.
type progress struct {
	w       io.Writer
	started time.Time
	last    time.Time
	printed bool
}

func newProgress(w io.Writer) *progress {
	now := time.Now()
	return &progress{w: w, started: now, last: now}
}

func (p *progress) report(total int64) func(int64) {
	return func(n int64) {
		now := time.Now()
		if now.Sub(p.last) < progressEvery {
			return
		}
		p.last, p.printed = now, true
		if total > 0 {
			fmt.Fprintf(p.w, "verify: %d/%d rows (%d%%)\n", n, total, 100*n/total)
		} else {
			fmt.Fprintf(p.w, "verify: %d rows\n", n)
		}
	}
}

func (p *progress) done() {
	if p.printed {
		fmt.Fprintf(p.w, "verify: done in %v\n", time.Since(p.started).Round(time.Millisecond))
	}
}

func runLedgerExport(ctx context.Context, env *environment, args []string) error {
	var out string
	var private bool
	fs := newFlagSet(env, "ledger export", "[--out FILE] [--private] [--data DIR] [--content DIR]")
	cf := registerConfig(fs, "ledger export")
	fs.StringVar(&out, "out", "", "write to FILE (atomically) instead of stdout")
	fs.BoolVar(&private, "private", false, "include descriptions and payloads (operator use; never publish)")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	c, err := openChain(env, cfg, true)
	if err != nil {
		return err
	}
	defer c.Close()
	if out == "" {
		return c.Export(ctx, env.stdout, private)
	}
	perm := os.FileMode(0o644)
	if private {
		perm = 0o600
	}
	f, err := renameio.NewPendingFile(out, renameio.WithPermissions(perm))
	if err != nil {
		return err
	}
	defer f.Cleanup() // a no-op after CloseAtomicallyReplace
	if err := c.Export(ctx, f, private); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}
