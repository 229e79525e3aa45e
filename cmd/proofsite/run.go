package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0  // the command did what was asked
	exitFailure = 1  // the command ran and failed (bad content, failed verification, I/O)
	exitUsage   = 64 // the command line itself was wrong (EX_USAGE)
)

// usageError marks a mistake in the command line; run answers it with exitUsage
// and a one-line hint.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// command is one subcommand: its one-line summary and the function that runs it.
type command struct {
	summary string
	run     func(ctx context.Context, env *environment, args []string) error
}

// environment is what a subcommand may touch of the outside world; tests pass
// their own.
type environment struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	logger         *slog.Logger
	getenv         func(string) string
}

func commands() map[string]command {
	return map[string]command{
		"build":   {"render content/ into the static site (--publish records the public claims on the chain first)", runBuild},
		"cert":    {"anchor a certificate in the chain through the gate (CERT_ANCHOR)", runCert},
		"gate":    {"the authorization checkpoint: keygen, sign, check, demo", runGate},
		"ledger":  {"operate the signed ledger: init, append, verify, export", runLedger},
		"serve":   {"serve the built site", runServe},
		"watch":   {"build, serve, and rebuild on every content edit", runWatch},
		"witness": {"run a C2SP tlog-witness: cosign a log's checkpoints only while each extends the last", runWitness},
		"version": {"print the version", runVersion},
	}
}

// run executes one proofsite command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &environment{
		stdin:  stdin,
		stdout: stdout,
		stderr: stderr,
		logger: newLogger(stderr, os.Getenv("PROOFSITE_LOG_LEVEL")),
		getenv: os.Getenv,
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "proofsite: unknown command %q (run \"proofsite help\")\n", args[0])
		return exitUsage
	}
	err := cmd.run(ctx, env, args[1:])
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "proofsite %s: %s (run \"proofsite %s -h\")\n", args[0], usage.msg, args[0])
		return exitUsage
	default:
		fmt.Fprintf(stderr, "proofsite %s: %v\n", args[0], err)
		return exitFailure
	}
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "proofsite: a static-first proof site with a live edge\n\nUsage: proofsite <command> [flags]\n\nCommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for name := range cmds {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, cmds[name].summary)
	}
}

// subcommand is one subcommand of a command group such as "ledger".
type subcommand struct {
	name string
	run  func(ctx context.Context, env *environment, args []string) error
}

// dispatch runs the subcommand of group that args[0] names; help prints
// usage (synopsis and summaries).
func dispatch(ctx context.Context, env *environment, group, help string, subs []subcommand, args []string) error {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	if len(args) == 0 {
		return usagef("missing subcommand (%s)", list)
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(env.stdout, "Usage: proofsite %s %s", group, help)
		return nil
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, env, args[1:])
		}
	}
	return usagef("unknown subcommand %q (%s)", args[0], list)
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints its usage to stderr.
func newFlagSet(env *environment, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: proofsite %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns flag errors and stray arguments into usage
// errors.
func parseFlags(fs *flag.FlagSet, args []string, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > maxArgs {
		return usagef("unexpected argument %q", fs.Arg(maxArgs))
	}
	return nil
}

// newLogger returns the process-wide structured logger writing text to w.
func newLogger(w io.Writer, level string) *slog.Logger {
	var lvl slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lvl = slog.LevelDebug
	case "warn":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		lvl = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
}
