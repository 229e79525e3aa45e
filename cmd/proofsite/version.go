package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is set at link time (-ldflags "-X main.version=..."); otherwise the
// module version recorded by the Go toolchain is used.
var version = ""

func runVersion(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "version", "")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "proofsite %s\n", currentVersion())
	return nil
}

func currentVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
