package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/live/reload"
	"github.com/proofsite/proofsite/site"
	"github.com/proofsite/proofsite/site/content"
	"github.com/proofsite/proofsite/site/watch"
)

func runWatch(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "watch", "[--content DIR] [--out DIR] [--drafts] [--future] [--expired] [--addr HOST:PORT] [--templates DIR]")
	cf := registerConfig(fs, "watch")
	vis := registerVisibility(fs)
	templatesDir := fs.String("templates", "templates", "`folder` of templ templates; changes to their text (templ generate --watch) re-render every page")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	b, err := newWatchBuilder(ctx, env, cfg, *vis)
	if err != nil {
		return contentError(env, cfg.Content, cfg.Out, err)
	}
	hub := reload.New()
	// The first build goes through the same path as every later one; if it
	// fails, whatever an earlier build left is served until the next save.
	if res, err := b.Build(ctx, nil); err != nil {
		hub.Publish(reload.Problem(reportBuildError(env, cfg.Content, cfg.Out, err)))
	} else {
		fmt.Fprintf(env.stdout, "proofsite: %s\n", res)
	}

	srv, err := live.New(live.Options{PublicDir: cfg.Out, Reload: hub, Logger: env.logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	contentWatch, err := watch.New(cfg.Content, watch.Options{Ignore: content.Ignored, Logger: env.logger})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go contentWatch.Run(ctx)
	templateChanges := watchTemplates(ctx, env, *templatesDir)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	fmt.Fprintf(env.stdout, "proofsite: watching %s, serving http://%s\n", cfg.Content, ln.Addr())

	for {
		var changes []string
		select {
		case <-ctx.Done():
			shutdown, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancelShutdown()
			return srv.Shutdown(shutdown)
		case err := <-serveErr:
			return err
		case batch, ok := <-contentWatch.Batches():
			if !ok {
				return errors.New("the content watch stopped")
			}
			changes = batch
			if slices.Contains(changes, content.ConfigFile) {
				// site.yaml reaches what the build publishes beside the
				// content too (the OpenAPI description, the gate demo):
				// derive them again, and rebuild everything with them.
				next, err := newWatchBuilder(ctx, env, cfg, *vis)
				if err != nil {
					hub.Publish(reload.Problem(reportBuildError(env, cfg.Content, cfg.Out, err)))
					continue
				}
				b, changes = next, nil
			}
		case <-templateChanges:
			b.RenderAll()
			changes = []string{}
		}
		res, err := b.Build(ctx, changes)
		if err != nil {
			hub.Publish(reload.Problem(reportBuildError(env, cfg.Content, cfg.Out, err)))
			continue
		}
		if res.Full {
			err = srv.SiteReplaced()
		} else {
			err = srv.SiteChanged(append(res.Written, res.Removed...))
		}
		if err != nil {
			return err
		}
		hub.Publish(reload.Build(res.Written))
		fmt.Fprintf(env.stdout, "proofsite: %s\n", res)
	}
}

// newWatchBuilder returns an incremental builder with the render options of
// the content's current site.yaml; watch makes a new one when site.yaml
// changes.
func newWatchBuilder(ctx context.Context, env *environment, cfg *config, vis content.Visibility) (*site.Builder, error) {
	cfg.charter = nil // read site.yaml as it is now
	ch, err := cfg.loadCharter()
	if err != nil {
		return nil, err
	}
	opts, err := renderOptions(env, ch, cfg.Data)
	if err != nil {
		return nil, err
	}
	opts.ReloadURL = live.ReloadPrefix
	return site.New(site.Options{ContentDir: cfg.Content, OutDir: cfg.Out, Render: opts, Visibility: vis, Trees: ledgerTiles(cfg.Data), Incremental: true, Logger: env.logger})
}

// reportBuildError prints a failed build to the terminal and returns the
// text the browser overlay shows.
func reportBuildError(env *environment, contentDir, outDir string, err error) string {
	var msg strings.Builder
	var list content.Errors
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(&msg, locate(contentDir, e))
		}
		fmt.Fprintf(&msg, "%s still serves the last good build; save a fix to rebuild.", outDir)
	} else {
		fmt.Fprintf(&msg, "build failed: %v", err)
	}
	fmt.Fprintln(env.stderr, msg.String())
	return msg.String()
}

// watchTemplates signals when templ's watch mode rewrites template text
// (*_templ.txt). Go code changes in templates restart the whole command
// instead, through templ generate --watch --cmd.
func watchTemplates(ctx context.Context, env *environment, dir string) <-chan struct{} {
	changed := make(chan struct{}, 1)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return changed
	}
	w, err := watch.New(dir, watch.Options{Ignore: func(rel string) bool {
		return !strings.HasSuffix(rel, "_templ.txt") && strings.Contains(rel, ".")
	}, Logger: env.logger})
	if err != nil {
		env.logger.Warn("not watching templates", "dir", dir, "err", err)
		return changed
	}
	go w.Run(ctx)
	go func() {
		for range w.Batches() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}()
	return changed
}
