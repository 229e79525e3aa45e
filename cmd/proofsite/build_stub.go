package main

import (
	"context"
	"errors"
)

// runBuild stands in for the static build, which is written on main. This
// file exists only so the ledger branch compiles on its own; delete it when
// merging (main defines the real runBuild).
func runBuild(_ context.Context, _ *environment, _ []string) error {
	return errors.New("build is not part of the ledger branch")
}
