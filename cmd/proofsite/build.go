package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"

	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/gate"
	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/render"
)

func runBuild(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "build", "[--content DIR] [--out DIR] [--drafts] [--future] [--expired] [--publish [--authorization FILE] [--data DIR]]")
	cf := registerConfig(fs, "build")
	vis := registerVisibility(fs)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the build to `file` (go tool pprof)")
	publishClaims := fs.Bool("publish", false, "apply the publish rule first: compare the public claims with those last recorded on the chain in --data; "+
		"if they changed, refuse unless --authorization allows exactly the change, and record the decision on the chain (a plain build is a preview and changes no chain)")
	authFile := fs.String("authorization", "", "signed Bridge PUBLIC_CLAIM_CHANGE authorization `file` for --publish")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if *authFile != "" && !*publishClaims {
		return usagef("--authorization needs --publish")
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	tuneGC(env)
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if err := checkContentDir(cfg.Content); err != nil {
		return err
	}
	if *publishClaims {
		if _, err := cfg.loadCharter(); err != nil {
			return contentError(env, cfg.Content, cfg.Out, err)
		}
		msg, err := publish(ctx, env, cfg, *authFile)
		if err != nil {
			return contentError(env, cfg.Content, cfg.Out, err)
		}
		fmt.Fprintln(env.stdout, msg)
	}
	// site.yaml, the chain and the live edge's routes are read while the
	// pages are; an invalid site.yaml fails the build with its errors alone.
	prepare := func() (render.Options, error) {
		ch, err := cfg.loadCharter()
		if err != nil {
			return render.Options{}, err
		}
		return renderOptions(env, ch, cfg.Data)
	}
	b, err := site.New(site.Options{ContentDir: cfg.Content, OutDir: cfg.Out, Prepare: prepare, Visibility: *vis, Trees: ledgerTiles(cfg.Data), Logger: env.logger})
	if err != nil {
		return err
	}
	res, err := b.Build(ctx, nil)
	if err != nil {
		if *publishClaims {
			err = fmt.Errorf("%w (the publish decision is on the chain; run build --publish again: the claims now match it, so no authorization is needed)", err)
		}
		return contentError(env, cfg.Content, cfg.Out, err)
	}
	fmt.Fprintf(env.stdout, "proofsite: %s into %s\n", res, cfg.Out)
	return nil
}

// registerVisibility adds the flags that publish what a build leaves out by
// default, as Hugo's --buildDrafts, --buildFuture and --buildExpired do.
func registerVisibility(fs *flag.FlagSet) *content.Visibility {
	var v content.Visibility
	fs.BoolVar(&v.Drafts, "drafts", false, "publish draft pages (front matter draft: true) too")
	fs.BoolVar(&v.Future, "future", false, "publish pages whose publishDate is still to come")
	fs.BoolVar(&v.Expired, "expired", false, "publish pages whose expiryDate has passed")
	return &v
}

// publish applies the publish rule (ledger/gate, recorded by ledger/chain)
// before a build: the whole site must be valid before the chain changes.
func publish(ctx context.Context, env *environment, cfg *config, authFile string) (string, error) {
	s, err := content.Load(os.DirFS(cfg.Content))
	if err != nil {
		return "", err
	}
	var auth []byte
	if authFile != "" {
		if auth, err = readInput(env, authFile, gate.MaxAuthorizationSize); err != nil {
			return "", err
		}
	}
	opts, err := cfg.chainOptions(env, s.Charter, false)
	if err != nil {
		return "", err
	}
	c, err := chain.Open(opts)
	if err != nil {
		return "", fmt.Errorf("%w: publishing records the decision on the chain: %w", chain.ErrPublishRefused, err)
	}
	defer c.Close()
	msg, err := c.Publish(ctx, chain.PublishRequest{Charter: s.Charter, Content: os.DirFS(cfg.Content), Authorization: auth, AuthorizationSource: authFile})
	if errors.Is(err, chain.ErrPublishRefused) {
		return "", fmt.Errorf("%w: the chain and %s are unchanged", err, cfg.Out)
	}
	if err != nil {
		return "", err
	}
	// The claims now published, the trust document says the same (the
	// Bridge keys, the quorum, the log).
	if _, err := chain.PublishTrust(opts); err != nil {
		return "", fmt.Errorf("the publish decision is on the chain, but the trust document: %w", err)
	}
	return msg, nil
}

// contentError prints every content problem on its own line, located
// relative to the working directory so editors can jump to it, and returns a
// one-line summary.
func contentError(env *environment, contentDir, outDir string, err error) error {
	var list content.Errors
	if !errors.As(err, &list) {
		return err
	}
	for _, e := range list {
		fmt.Fprintln(env.stderr, locate(contentDir, e))
	}
	noun := "errors"
	if len(list) == 1 {
		noun = "error"
	}
	return fmt.Errorf("%d content %s; %s was not changed", len(list), noun, outDir)
}

// configError prints every problem of site.yaml, located, and returns a
// one-line summary (contentError for commands that write no output).
func configError(env *environment, contentDir string, err error) error {
	var list content.Errors
	if !errors.As(err, &list) {
		return err
	}
	for _, e := range list {
		fmt.Fprintln(env.stderr, locate(contentDir, e))
	}
	return fmt.Errorf("%d problem(s) in %s", len(list), filepath.Join(contentDir, content.ConfigFile))
}

// locate names a content problem relative to the working directory, the form
// editors and terminals turn into links.
func locate(contentDir string, e *content.Error) string {
	located := *e
	located.File = filepath.ToSlash(filepath.Join(contentDir, e.File))
	return located.Error()
}

// startCPUProfile profiles the process into file until the returned
// function is called.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// tuneGC bounds the heap of a build. A full build streams its outputs to
// disk and keeps little alive (the content), so the default GOGC=100 keeps
// the heap small. GOGC=400, set here before builds streamed, made the heap
// grow into fresh memory instead, and a fresh page is a fault that costs
// microseconds on a VM: at 1,000 generated pages it took 17.8k page faults
// against 8.4k and about 5% more CPU, at 5,000 pages 44k against 21k for the
// same CPU (rough, 2026-11-23, machine shared). A soft limit of 1 GiB keeps
// very large sites in bounds; GOGC and GOMEMLIMIT in the environment win.
func tuneGC(env *environment) {
	if env.getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}
