package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixtureContent copies the test site, with extra appended to its
// site.yaml.
func fixtureContent(t *testing.T, extra string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.CopyFS(dir, os.DirFS("../../site/testdata/site")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "site.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(extra); err != nil {
		t.Fatal(err)
	}
	return dir
}

// resolveFor resolves command's configuration from args and an
// environment, the way the command does.
func resolveFor(command string, args []string, vars map[string]string) (*config, error) {
	env := &environment{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cf := registerConfig(fs, command)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return cf.resolve(env)
}

// envToken is a memory token as PROOFSITE_MEMORY_TOKEN gives it.
const envToken = "env-token-0123456789abcdef0123456789abcdef"

// TestConfigPrecedence checks, for every subcommand and every setting it
// takes, that a flag beats PROOFSITE_*, which beats site.yaml's runtime
// section (for the settings it may hold), which beats the default.
func TestConfigPrecedence(t *testing.T) {
	withRuntime := fixtureContent(t, "runtime:\n  walk_every: 7m\n  post_limit: 7/7m\n  witnesses: 7\n")
	plain := fixtureContent(t, "")
	rate := func(c *config) string { return fmt.Sprintf("%d/%s", c.PostLimit.Max, c.PostLimit.Window) }
	values := map[string]struct {
		flag, env, yaml, def string
		got                  func(*config) string
	}{
		"content":         {withRuntime, plain, "", "content", func(c *config) string { return c.Content }},
		"out":             {"flag-out", "env-out", "", "public", func(c *config) string { return c.Out }},
		"data":            {"flag-data", "env-data", "", "data", func(c *config) string { return c.Data }},
		"witness-keys":    {"/mnt/flag-witness", "/mnt/env-witness", "", "", func(c *config) string { return c.WitnessKeys }},
		"addr":            {"127.0.0.1:1", "127.0.0.1:2", "", "127.0.0.1:8080", func(c *config) string { return c.Addr }},
		"api-addr":        {"127.0.0.1:3", "127.0.0.1:4", "", "", func(c *config) string { return c.APIAddr }},
		"trusted-proxies": {"10.0.0.1,10.0.0.2", "10.0.0.3", "", "", func(c *config) string { return strings.Join(c.TrustedProxies, ",") }},
		"post-limit":      {"1/1s", "2/2s", "7/7m0s", "30/1m0s", rate},
		"walk-every":      {"1s", "2s", "7m0s", "10m0s", func(c *config) string { return c.WalkEvery.String() }},
		"witnesses":       {"1", "3", "7", "2", func(c *config) string { return fmt.Sprint(c.Witnesses) }},
		"log-level":       {"debug", "warn", "", "info", func(c *config) string { return c.LogLevel }},
		"memory-dsn":      {"postgres://flag@db.internal/p", "postgres://env@db.internal/p", "", "", func(c *config) string { return c.MemoryDSN }},
		"memory-token": {"", envToken, "", "", func(c *config) string {
			if c.MemoryTokenHash == nil {
				return ""
			}
			if *c.MemoryTokenHash != sha256.Sum256([]byte(envToken)) {
				return "another hash"
			}
			return envToken
		}},
		"memory-token-file": {"/flag/tokens", "/env/tokens", "", "", func(c *config) string { return c.MemoryTokenFile }},
	}
	for _, s := range settings {
		if _, ok := values[s.name]; !ok {
			t.Fatalf("setting %s has no case", s.name)
		}
	}
	commands := slices.Sorted(func(yield func(string) bool) {
		for c := range commandSettings {
			if !yield(c) {
				return
			}
		}
	})
	for _, command := range commands {
		for _, s := range settingsOf(commandSettings[command]) {
			v := values[s.name]
			flagName := "--" + (&configFlags{command: command}).flagName(s.name)
			layers := []struct {
				layer   string
				args    []string
				vars    map[string]string
				content string
				want    string
				skip    bool
			}{
				{layer: "flag", args: []string{flagName, v.flag}, vars: map[string]string{s.env: v.env}, content: withRuntime, want: v.flag, skip: s.envOnly},
				{layer: "env", vars: map[string]string{s.env: v.env}, content: withRuntime, want: v.env},
				{layer: "site.yaml", content: withRuntime, want: v.yaml, skip: s.runtime == nil},
				{layer: "default", content: plain, want: v.def},
			}
			for _, l := range layers {
				if l.skip {
					continue
				}
				t.Run(command+"/"+s.name+"/"+l.layer, func(t *testing.T) {
					args := l.args
					if s.name != "content" {
						args = append([]string{"--content", l.content}, args...)
					}
					cfg, err := resolveFor(command, args, l.vars)
					if err != nil {
						t.Fatal(err)
					}
					want := l.want
					if s.name == "post-limit" || s.name == "walk-every" {
						want = normalise(t, s.name, want)
					}
					if got := v.got(cfg); got != want {
						t.Errorf("got %q, want %q", got, want)
					}
				})
			}
		}
	}
}

// normalise writes a rate or a duration as config prints it.
func normalise(t *testing.T, name, v string) string {
	t.Helper()
	if name == "walk-every" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	n, d, _ := strings.Cut(v, "/")
	w, err := time.ParseDuration(d)
	if err != nil {
		t.Fatal(err)
	}
	return n + "/" + w.String()
}

// TestConfigFlagsPerCommand: each subcommand's help lists the flags of the
// settings commandSettings gives it, so the table above tests what the
// commands run.
func TestConfigFlagsPerCommand(t *testing.T) {
	for command, names := range commandSettings {
		t.Run(command, func(t *testing.T) {
			code, stdout, stderr := cli(t, append(strings.Fields(command), "-h")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, s := range settingsOf(names) {
				if !strings.Contains(stdout+stderr, "(env "+s.env) {
					t.Errorf("%s -h does not list the flag of %s", command, s.name)
				}
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	broken := fixtureContent(t, "runtime:\n  post_limit: lots\n")
	tests := []struct {
		desc string
		args []string
		vars map[string]string
		code int
		want string
	}{
		{"bad flag", []string{"serve", "--post-limit", "nope"}, nil, exitUsage, `--post-limit: rate "nope": want N/DURATION`},
		{"bad variable", []string{"serve"}, map[string]string{"PROOFSITE_WALK_EVERY": "soon"}, exitUsage, "PROOFSITE_WALK_EVERY: time: invalid duration"},
		{"bad level", []string{"ledger", "verify", "--log-level", "loud"}, nil, exitUsage, `--log-level: want debug, info, warn or error, found "loud"`},
		{"a secret as a flag", []string{"serve", "--memory-token", envToken}, nil, exitUsage, "flag provided but not defined: -memory-token"},
		{"weak token", []string{"serve"}, map[string]string{"PROOFSITE_MEMORY_TOKEN": "short"}, exitUsage, "PROOFSITE_MEMORY_TOKEN: token is 5 characters, at least 32"},
		{"site.yaml", []string{"serve", "--content", broken}, nil, exitFailure, `site.yaml:68: runtime.post_limit: rate "lots"`},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			for k, v := range tc.vars {
				t.Setenv(k, v)
			}
			code, _, stderr := cli(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d)\n%s", code, tc.code, stderr)
			}
		})
	}
}
