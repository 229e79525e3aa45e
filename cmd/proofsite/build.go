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
	"time"

	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/render"
)

// siteFlags are the flags every command that builds the site shares.
type siteFlags struct {
	content, out, data string
	visibility         content.Visibility
}

func (f *siteFlags) register(env *environment, fs *flag.FlagSet) {
	fs.StringVar(&f.content, "content", envOr(env, "PROOFSITE_CONTENT", "content"), "content `folder` (env PROOFSITE_CONTENT)")
	fs.StringVar(&f.out, "out", envOr(env, "PROOFSITE_OUT", "public"), "output `folder` (env PROOFSITE_OUT)")
	fs.StringVar(&f.data, "data", envOr(env, dataEnv, defaultDataDir), "data `folder` whose published ledger keys ai.json lists, if it holds a chain (env "+dataEnv+")")
	fs.BoolVar(&f.visibility.Drafts, "drafts", false, "publish draft pages (front matter draft: true) too")
	fs.BoolVar(&f.visibility.Future, "future", false, "publish pages whose publishDate is still to come")
	fs.BoolVar(&f.visibility.Expired, "expired", false, "publish pages whose expiryDate has passed")
}

// options returns the render options of the content's configuration.
func (f *siteFlags) options() (render.Options, error) {
	if err := f.checkContentDir(); err != nil {
		return render.Options{}, err
	}
	cfg, err := content.LoadConfig(os.DirFS(f.content))
	if err != nil {
		return render.Options{}, err
	}
	return renderOptions(cfg, f.data)
}

// checkContentDir reports a missing content folder as such, rather than as a
// missing site.yaml inside it.
func (f *siteFlags) checkContentDir() error {
	info, err := os.Stat(f.content)
	if err != nil {
		return fmt.Errorf("content folder: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("content folder %s is not a folder", f.content)
	}
	return nil
}

func envOr(env *environment, key, fallback string) string {
	if v := env.getenv(key); v != "" {
		return v
	}
	return fallback
}

func runBuild(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "build", "[--content DIR] [--out DIR] [--drafts] [--future] [--expired] [--publish [--authorization FILE] [--data DIR]]")
	var f siteFlags
	f.register(env, fs)
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
	tuneGC(env)
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	opts, err := f.options()
	if err != nil {
		return contentError(env, f.content, f.out, err)
	}
	b, err := site.New(site.Options{
		ContentDir: f.content,
		OutDir:     f.out,
		Render:     opts,
		Visibility: f.visibility,
		Logger:     env.logger,
	})
	if err != nil {
		return err
	}
	if *publishClaims {
		msg, err := publish(ctx, env, f, *authFile, time.Now())
		if err != nil {
			return contentError(env, f.content, f.out, err)
		}
		fmt.Fprintln(env.stdout, msg)
	}
	res, err := b.Build(ctx, nil)
	if err != nil {
		if *publishClaims {
			err = fmt.Errorf("%w (the publish decision is on the chain; run build --publish again: the claims now match it, so no authorization is needed)", err)
		}
		return contentError(env, f.content, f.out, err)
	}
	fmt.Fprintf(env.stdout, "proofsite: %s into %s\n", res, f.out)
	return nil
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

// tuneGC makes the garbage collector run less often during a build. A build
// keeps little alive (the content, ~25 MB for 5,000 pages) while allocating
// a lot (parse trees, highlighted code: ~800 MB), so the default GOGC=100
// collects about forty times; 400 cuts the build's CPU by a third for a peak
// RSS still well under Hugo's (see cmd/sitebench). A soft limit of 1 GiB
// keeps very large sites in bounds. GOGC and GOMEMLIMIT in the environment
// win.
func tuneGC(env *environment) {
	if env.getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if env.getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}
