package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger"
	"github.com/proofsite/proofsite/ledger/store"
)

// Where things live, relative to --data and --content.
const (
	ledgerDirName   = "ledger"               // the Badger store under --data
	historyFileName = "ledger/history.jsonl" // the published past under --content
	defaultDataDir  = "./data"
	dataEnv         = "PROOFSITE_DATA"
	progressEvery   = time.Second
	ledgerSynopsis  = "init|append|verify|export [flags]"
	ledgerSummaries = `Subcommands:
  init      import content/ledger/history.jsonl, signed with this instance's keys (generated on first run)
  append    append one block: --kind K --payload-file F [--description D]
  verify    full verification of the store, or of an export with --file; exit 0 on a pass, 1 on a fail
  export    write the chain as JSONL (metadata only; --private adds descriptions and payloads)
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

// ledgerFlags are the flags every ledger subcommand has.
type ledgerFlags struct {
	data, content string
}

func (f *ledgerFlags) register(fs *flag.FlagSet, env *environment) {
	def := defaultDataDir
	if v := env.getenv(dataEnv); v != "" {
		def = v
	}
	fs.StringVar(&f.data, "data", def, "data directory (keys and the ledger store); env "+dataEnv)
	fs.StringVar(&f.content, "content", "content", "content directory (site.yaml seams, ledger/history.jsonl)")
}

func (f *ledgerFlags) storeDir() string { return filepath.Join(f.data, ledgerDirName) }

// openStore opens the ledger with the pins of the trust document (keys,
// seams, quorum, log). A legacy keys.json pins no seam: the documented
// seams of site.yaml then have no hashes and document nothing, so the walk
// fails until "proofsite ledger init" rewrites keys.json.
func (f *ledgerFlags) openStore(env *environment, keysFile string, genesis ledger.Hash) (*store.Store, error) {
	if keysFile == "" {
		keysFile = filepath.Join(f.data, keysJSONName)
	}
	trust, err := readTrustFile(keysFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", store.ErrNotInitialized, keysFile)
	}
	if err != nil {
		return nil, err
	}
	opts, err := trust.Options()
	if err != nil {
		return nil, err
	}
	if trust.Legacy() {
		if opts.Seams, err = documentedSeams(f.content); err != nil {
			return nil, err
		}
	}
	if !genesis.IsZero() {
		opts.Genesis = genesis
	}
	return store.Open(f.storeDir(), store.Options{Keys: opts.Keys, Seams: opts.Seams, Genesis: opts.Genesis,
		WitnessQuorum: opts.WitnessQuorum, Log: opts.Log, Logger: env.logger})
}

func runLedgerInit(ctx context.Context, env *environment, args []string) error {
	var f ledgerFlags
	fs := newFlagSet(env, "ledger init", "[--data DIR] [--content DIR]")
	f.register(fs, env)
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	seams, err := documentedSeams(f.content)
	if err != nil {
		return err
	}
	hf, err := os.Open(filepath.Join(f.content, historyFileName))
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	rows, err := ledger.ReadHistory(hf)
	hf.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", hf.Name(), err)
	}

	signers, err := loadSigners(f.data)
	createdKeys := false
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(f.data, keysDirName)); statErr == nil {
			return err // keys exist but cannot be read: never replace them
		}
		if signers, err = createKeys(f.data); err != nil {
			return fmt.Errorf("generate keys: %w", err)
		}
		createdKeys = true
		env.logger.Info("generated ledger keys", "dir", filepath.Join(f.data, keysDirName), "writer", signers.Writer.ID())
	}
	// Undo the keys of a first init that fails, so nothing is half-written.
	ok := false
	defer func() {
		if createdKeys && !ok {
			os.RemoveAll(filepath.Join(f.data, keysDirName))
			os.Remove(filepath.Join(f.data, keysJSONName))
		}
	}()

	blocks, privs, err := ledger.SealHistory(rows, signers)
	if err != nil {
		return err
	}
	keys := signers.KeySet()
	// The seams are pinned to the rows just sealed from the published
	// history, and published with the keys in the trust document.
	if seams, err = ledger.PinSeams(seams, blocks); err != nil {
		return err
	}
	trust, err := trustDocument(f.content, signers, blocks[0].Hash(), seams)
	if err != nil {
		return err
	}
	if _, err := os.Stat(f.storeDir()); err == nil {
		// Idempotent: the same history sealed with the same keys gives the
		// same blocks (ed25519 is deterministic), so a store that starts
		// with them is this chain, possibly grown since.
		if err := sameChain(ctx, f.storeDir(), blocks, privs, keys, seams, env); err != nil {
			return err
		}
		if err := writeTrustDocument(f.data, trust); err != nil {
			return err
		}
		ok = true
		fmt.Fprintf(env.stdout, "ledger already initialised in %s (genesis %s); nothing to do\n", f.storeDir(), blocks[0].Hash())
		return nil
	}
	v, err := store.Create(f.storeDir(), blocks, privs, store.Options{Keys: keys, Seams: seams, WitnessQuorum: trust.WitnessQuorum, Log: trust.Log, Logger: env.logger})
	if err != nil {
		return err
	}
	if err := writeTrustDocument(f.data, trust); err != nil {
		os.RemoveAll(f.storeDir())
		return err
	}
	ok = true
	fmt.Fprintf(env.stdout, "initialised the ledger in %s: %d rows from %s\n", f.storeDir(), len(blocks), historyFileName)
	fmt.Fprintf(env.stdout, "genesis  %s\nhead     %d %s\nverdict  %s\nkeys     %s (public); private keys in %s\n",
		blocks[0].Hash(), v.Head.Index, v.Head.Hash, v.Verdict, filepath.Join(f.data, keysJSONName), filepath.Join(f.data, keysDirName))
	return nil
}

// sameChain checks that the store in dir begins with blocks and their
// private parts.
func sameChain(ctx context.Context, dir string, blocks []ledger.Block, privs []ledger.Private, keys ledger.KeySet, seams []ledger.Seam, env *environment) error {
	s, err := store.Open(dir, store.Options{Keys: keys, Seams: seams, Logger: env.logger})
	if err != nil {
		return err
	}
	defer s.Close()
	i := 0
	for row, err := range s.Rows(ctx, true) {
		if err != nil {
			return err
		}
		if i == len(blocks) {
			break
		}
		b := row.Block
		if row.Private.Description != privs[i].Description {
			return fmt.Errorf("refusing to overwrite %s: the description of block %d differs from the history", dir, b.Index())
		}
		if b.Hash() != blocks[i].Hash() {
			return fmt.Errorf("refusing to overwrite %s: it holds a different chain (block %d is %s, the history gives %s); move it away to re-initialise",
				dir, b.Index(), b.Hash(), blocks[i].Hash())
		}
		i++
	}
	if i != len(blocks) {
		return fmt.Errorf("refusing to overwrite %s: it holds %d of the %d history rows", dir, i, len(blocks))
	}
	return nil
}

func runLedgerAppend(ctx context.Context, env *environment, args []string) error {
	var f ledgerFlags
	var kind, payloadFile, description, at string
	fs := newFlagSet(env, "ledger append", "--kind K --payload-file F [--description D] [--data DIR]")
	f.register(fs, env)
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
	var t time.Time
	if at != "" {
		var err error
		if t, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return usagef("--time: %v", err)
		}
	}
	var payload []byte
	var err error
	if payloadFile == "-" {
		payload, err = io.ReadAll(env.stdin)
	} else {
		payload, err = os.ReadFile(payloadFile)
	}
	if err != nil {
		return err
	}
	signers, err := loadSigners(f.data)
	if err != nil {
		return err
	}
	s, err := f.openStore(env, "", ledger.Hash{})
	if err != nil {
		return err
	}
	defer s.Close()
	b, err := s.AppendEntry(ctx, store.Entry{Kind: kind, Payload: payload, Description: description, Time: t}, signers)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "appended block %d %s\n", b.Index(), b.Hash())
	return nil
}

func runLedgerVerify(ctx context.Context, env *environment, args []string) error {
	var f ledgerFlags
	var file, genesis, keysFile, checkpoint, state string
	var asJSON bool
	fs := newFlagSet(env, "ledger verify", "[--file EXPORT.jsonl] [--json] [--genesis HASH] [--keys FILE] [--checkpoint SIZE:HASH] [--state FILE]")
	f.register(fs, env)
	fs.StringVar(&file, "file", "", "verify this JSONL export instead of the store (- for stdin)")
	fs.BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	fs.StringVar(&genesis, "genesis", "", "pinned genesis hash (default: the store's, or the export header's)")
	fs.StringVar(&keysFile, "keys", "", "pinned keys file, keys.json form (default: the data dir's, or the export header's)")
	fs.StringVar(&checkpoint, "checkpoint", "", "a checkpoint SIZE:HASH kept from an earlier run; the chain must extend it")
	fs.StringVar(&state, "state", "", "file remembering the last checkpoint: required if present, updated after a pass")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if state != "" && checkpoint == "" {
		if saved, err := os.ReadFile(state); err == nil {
			checkpoint = strings.TrimSpace(string(saved))
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	var pinGenesis ledger.Hash
	if genesis != "" {
		var err error
		if pinGenesis, err = ledger.ParseHash(genesis); err != nil {
			return usagef("--genesis: %v", err)
		}
	}
	var cp *ledger.Checkpoint
	if checkpoint != "" {
		c, err := ledger.ParseCheckpoint(checkpoint)
		if err != nil {
			return usagef("--checkpoint: %v", err)
		}
		cp = &c
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
		// Pins come from the trust document given with --keys; the
		// header's seams are never authority (Reader.Options).
		var trust *ledger.TrustDocument
		if keysFile != "" {
			doc, err := readTrustFile(keysFile)
			if err != nil {
				return err
			}
			trust = &doc
		}
		opts, err := r.Options(trust)
		if err != nil {
			return err
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
		s, err := f.openStore(env, keysFile, pinGenesis) // zero: the genesis recorded at init
		if err != nil {
			return err
		}
		defer s.Close()
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
		return writeFileAtomic(state, []byte(v.Checkpoint.String()+"\n"), 0o644)
	}
	return nil
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

func runLedgerExport(ctx context.Context, env *environment, args []string) (err error) {
	var f ledgerFlags
	var out string
	var private bool
	fs := newFlagSet(env, "ledger export", "[--out FILE] [--private] [--data DIR] [--content DIR]")
	f.register(fs, env)
	fs.StringVar(&out, "out", "", "write to FILE (atomically) instead of stdout")
	fs.BoolVar(&private, "private", false, "include descriptions and payloads (operator use; never publish)")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	s, err := f.openStore(env, "", ledger.Hash{})
	if err != nil {
		return err
	}
	defer s.Close()
	var w io.Writer = env.stdout
	if out != "" {
		perm := os.FileMode(0o644)
		if private {
			perm = 0o600
		}
		af, cerr := createAtomic(out, perm)
		if cerr != nil {
			return cerr
		}
		defer af.Abort() // a no-op after Commit
		w = af
		defer func() {
			if err == nil { // the function's named result
				err = af.Commit()
			}
		}()
	}
	hdr := ledger.ExportHeader{GenesisHash: s.GenesisHash(), Keys: s.Keys().Published(), DocumentedSeams: s.Seams(), Private: private}
	if s.Log().Origin != "" { // the checkpoint over the exported rows, signed by the writer key
		signers, err := loadSigners(f.data)
		if err != nil {
			return err
		}
		note, err := s.SignedCheckpoint(signers.Writer)
		if err != nil {
			return err
		}
		hdr.Checkpoint = string(note)
	}
	ew, err := ledger.NewWriter(w, hdr)
	if err != nil {
		return err
	}
	for row, err := range s.Rows(ctx, private) {
		if err != nil {
			return err
		}
		if err := ew.Write(row); err != nil {
			return err
		}
	}
	if err := ew.Flush(); err != nil {
		return err
	}
	return nil
}
