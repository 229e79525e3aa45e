package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

func runServe(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "serve", "[--addr HOST:PORT] [--public DIR]")
	addr := fs.String("addr", envOr(env, "PROOFSITE_ADDR", "127.0.0.1:8080"), "listen `address` (env PROOFSITE_ADDR)")
	public := fs.String("public", envOr(env, "PROOFSITE_OUT", "public"), "built site `folder` to serve")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(*public)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.stdout, "proofsite: serving %s on http://%s\n", *public, ln.Addr())
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
