package main

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/charter"
	"github.com/proofsite/proofsite/ledger/keystore"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/live/memory"
	"github.com/proofsite/proofsite/site/content"
)

// config is the one resolved configuration of a command. Every setting
// comes from, in this order of precedence: its flag, its PROOFSITE_*
// variable, the runtime section of the content's site.yaml (for the
// settings site.yaml may hold), its default. Every subcommand resolves it
// the same way, through configFlags.
type config struct {
	Content        string        // content folder
	Out            string        // built site folder
	Data           string        // data folder: the chain, its published keys, the writer key
	WitnessKeys    string        // witness keys folder; "" means DATA/witness-keys
	Addr, APIAddr  string        // listen addresses; APIAddr "" means none
	TrustedProxies []string      // reverse proxies whose X-Forwarded-For is believed
	PostLimit      charter.Rate  // per-client rate of POST routes without a limit of their own
	WalkEvery      time.Duration // how often serve re-verifies the whole chain
	Witnesses      int           // witness keys a first start generates
	LogLevel       string        // debug, info, warn or error

	// The memory store's SQL database and the tokens its store route
	// accepts: a PostgreSQL DSN ("" means SQLite in DATA/memory), the
	// SHA-256 of PROOFSITE_MEMORY_TOKEN (the secret itself is not kept), and
	// a file of such hashes.
	MemoryDSN       string
	MemoryTokenHash *[sha256.Size]byte
	MemoryTokenFile string

	// charter is site.yaml, when resolving read it.
	charter *charter.Charter
}

// setting is one configurable value and where it may come from.
type setting struct {
	name  string // the flag's name
	env   string
	def   string // the default, as text
	usage string
	// envOnly settings have no flag: they hold a secret, which on a
	// command line every user of the machine can read.
	envOnly bool
	// runtime returns site.yaml's value as text, "" when unset; nil when
	// site.yaml does not hold this setting.
	runtime func(charter.Runtime) string
	// set parses a value into c.
	set func(c *config, v string) error
}

// settings are every setting, in the order flags list them.
var settings = []setting{
	{name: "content", env: "PROOFSITE_CONTENT", def: "content", usage: "content `folder` (site.yaml, pages, ledger/history.jsonl)",
		set: func(c *config, v string) error { c.Content = v; return nil }},
	{name: "out", env: "PROOFSITE_OUT", def: "public", usage: "built site `folder`",
		set: func(c *config, v string) error { c.Out = v; return nil }},
	{name: "data", env: "PROOFSITE_DATA", def: "data", usage: "data `folder`: the chain, its published keys (keys.json) and the writer key (keys/)",
		set: func(c *config, v string) error { c.Data = v; return nil }},
	{name: "witness-keys", env: "PROOFSITE_WITNESS_KEYS", def: "", usage: "`folder` of the witness keys, kept apart from the writer key (default DATA/" + chain.WitnessKeyDir + ")",
		set: func(c *config, v string) error { c.WitnessKeys = v; return nil }},
	{name: "addr", env: "PROOFSITE_ADDR", def: "127.0.0.1:8080", usage: "listen `address` of the site and its live routes",
		set: func(c *config, v string) error { c.Addr = v; return nil }},
	{name: "api-addr", env: "PROOFSITE_API_ADDR", def: "", usage: "optional second listen `address` for the API origin: /api/v1/*, /api/chain/latest",
		set: func(c *config, v string) error { c.APIAddr = v; return nil }},
	{name: "trusted-proxies", env: "PROOFSITE_TRUSTED_PROXIES", def: "", usage: "comma-separated `addresses` or CIDR prefixes of reverse proxies whose X-Forwarded-For is believed",
		set: func(c *config, v string) error { c.TrustedProxies = splitList(v); return nil }},
	{name: "post-limit", env: "PROOFSITE_POST_LIMIT", def: live.DefaultPostLimit.String(), usage: "per-client `rate` of POST routes without a limit of their own, N/DURATION",
		runtime: func(r charter.Runtime) string { return r.PostLimit },
		set: func(c *config, v string) (err error) {
			c.PostLimit, err = charter.ParseRate(v)
			return err
		}},
	{name: "walk-every", env: "PROOFSITE_WALK_EVERY", def: chain.DefaultWalkEvery.String(), usage: "how often to re-verify the whole chain (a `duration`)",
		runtime: func(r charter.Runtime) string { return durationText(r.WalkEvery) },
		set: func(c *config, v string) (err error) {
			if c.WalkEvery, err = time.ParseDuration(v); err == nil && c.WalkEvery <= 0 {
				err = fmt.Errorf("want a positive duration, found %s", v)
			}
			return err
		}},
	{name: "witnesses", env: "PROOFSITE_WITNESSES", def: strconv.Itoa(keystore.DefaultWitnesses), usage: "`number` of witness keys a first start generates; every block carries a signature of each",
		runtime: func(r charter.Runtime) string { return intText(r.Witnesses) },
		set: func(c *config, v string) (err error) {
			if c.Witnesses, err = strconv.Atoi(v); err == nil && c.Witnesses < 1 {
				err = fmt.Errorf("want 1 or more, found %d", c.Witnesses)
			}
			return err
		}},
	{name: "memory-dsn", env: "PROOFSITE_MEMORY_DSN", def: "", usage: "PostgreSQL `DSN` of the memory's SQL store, for several replicas (default: SQLite in DATA/memory); prefer the variable when it holds a password",
		set: func(c *config, v string) error { c.MemoryDSN = v; return nil }},
	{name: "memory-token", env: "PROOFSITE_MEMORY_TOKEN", envOnly: true, def: "", usage: "a bearer token POST /api/memory/store accepts: at least 32 visible ASCII characters (e.g. openssl rand -hex 32)",
		set: func(c *config, v string) error {
			if v == "" {
				c.MemoryTokenHash = nil
				return nil
			}
			h, err := memory.TokenHash(v)
			if err != nil {
				return errors.New(strings.TrimPrefix(err.Error(), "memory: "))
			}
			c.MemoryTokenHash = &h
			return nil
		}},
	{name: "memory-token-file", env: "PROOFSITE_MEMORY_TOKEN_FILE", def: "", usage: "`file` of the SHA-256 hashes (64 hex digits a line, as sha256sum prints them) of the bearer tokens POST /api/memory/store accepts",
		set: func(c *config, v string) error { c.MemoryTokenFile = v; return nil }},
	{name: "log-level", env: "PROOFSITE_LOG_LEVEL", def: "info", usage: "`level` of the logs on stderr: debug, info, warn or error",
		set: func(c *config, v string) error {
			if !slices.Contains([]string{"debug", "info", "warn", "error"}, strings.ToLower(v)) {
				return fmt.Errorf("want debug, info, warn or error, found %q", v)
			}
			c.LogLevel = strings.ToLower(v)
			return nil
		}},
}

// commandSettings are the settings each subcommand takes, each also as a
// flag; flagNames renames a flag where a subcommand calls it otherwise.
var (
	commandSettings = map[string][]string{
		"build": {"content", "out", "data", "witness-keys", "log-level"},
		"watch": {"content", "out", "data", "addr", "log-level"},
		"serve": {"content", "out", "data", "witness-keys", "witnesses", "addr", "api-addr", "trusted-proxies", "post-limit", "walk-every",
			"memory-dsn", "memory-token", "memory-token-file", "log-level"},
		"ledger init":   {"content", "data", "witness-keys", "witnesses", "log-level"},
		"ledger append": {"content", "data", "witness-keys", "log-level"},
		"ledger verify": {"content", "data", "log-level"},
		"ledger export": {"content", "data", "log-level"},
		"cert anchor":   {"content", "data", "witness-keys", "log-level"},
		"gate check":    {"content"},
		"gate demo":     {"content"},
	}
	flagNames = map[string]map[string]string{
		"serve": {"out": "public"},
	}
)

func durationText(d charter.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func intText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// configFlags are the configuration flags of one subcommand.
type configFlags struct {
	command string
	fs      *flag.FlagSet
	values  map[string]*string // by setting name
}

// registerConfig adds the flags of command's settings to fs.
func registerConfig(fs *flag.FlagSet, command string) *configFlags {
	names, ok := commandSettings[command]
	if !ok {
		panic("proofsite: no settings for command " + command)
	}
	cf := &configFlags{command: command, fs: fs, values: map[string]*string{}}
	var envOnly []setting
	for _, s := range settingsOf(names) {
		if s.envOnly {
			envOnly = append(envOnly, s)
			continue
		}
		usage := s.usage + " (env " + s.env
		if s.runtime != nil {
			usage += "; site.yaml runtime." + strings.ReplaceAll(s.name, "-", "_")
		}
		usage += ")"
		cf.values[s.name] = fs.String(cf.flagName(s.name), s.def, usage)
	}
	if len(envOnly) > 0 {
		flagsUsage := fs.Usage
		fs.Usage = func() {
			flagsUsage()
			fmt.Fprintf(fs.Output(), "\nSet only in the environment (a secret on the command line is visible to every user):\n")
			for _, s := range envOnly {
				fmt.Fprintf(fs.Output(), "  %s\n    \t%s (env %s only)\n", s.env, s.usage, s.env)
			}
		}
	}
	return cf
}

func (cf *configFlags) flagName(setting string) string {
	if n, ok := flagNames[cf.command][setting]; ok {
		return n
	}
	return setting
}

func settingsOf(names []string) []setting {
	var out []setting
	for _, s := range settings {
		if slices.Contains(names, s.name) {
			out = append(out, s)
		}
	}
	return out
}

// resolve returns the configuration after the flags were parsed. site.yaml
// is read only when a setting falls through to it; a missing content
// folder or site.yaml is no layer at all (the command says so when it
// needs them), an invalid one is an error with file and line.
func (cf *configFlags) resolve(env *environment) (*config, error) {
	c := &config{}
	for _, s := range settings { // the defaults, also of settings the command does not take
		if err := s.set(c, s.def); err != nil {
			panic(fmt.Sprintf("proofsite: the default of %s: %v", s.name, err))
		}
	}
	set := map[string]bool{}
	cf.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// settings lists the content folder first: it locates site.yaml.
	for _, s := range settingsOf(commandSettings[cf.command]) {
		var v, from string
		switch {
		case !s.envOnly && set[cf.flagName(s.name)]:
			v, from = *cf.values[s.name], "--"+cf.flagName(s.name)
		case env.getenv(s.env) != "":
			v, from = env.getenv(s.env), s.env
		case s.runtime != nil:
			rt, err := c.runtime()
			if err != nil {
				return nil, configError(env, c.Content, err)
			}
			v, from = s.runtime(rt), "site.yaml runtime."+strings.ReplaceAll(s.name, "-", "_")
		}
		if v == "" {
			continue // the default
		}
		if err := s.set(c, v); err != nil {
			return nil, usagef("%s: %v", from, err)
		}
	}
	env.logger = newLogger(env.stderr, c.LogLevel)
	return c, nil
}

// runtime returns site.yaml's runtime section; without a site.yaml it is
// empty.
func (c *config) runtime() (charter.Runtime, error) {
	if c.charter == nil {
		if _, err := os.Stat(filepath.Join(c.Content, content.ConfigFile)); errors.Is(err, fs.ErrNotExist) {
			return charter.Runtime{}, nil
		}
	}
	ch, err := c.loadCharter()
	if err != nil {
		return charter.Runtime{}, err
	}
	return ch.Runtime, nil
}

// loadCharter returns the content's site.yaml, reading it once.
func (c *config) loadCharter() (*charter.Charter, error) {
	if c.charter == nil {
		if err := checkContentDir(c.Content); err != nil {
			return nil, err
		}
		ch, err := content.LoadCharter(os.DirFS(c.Content))
		if err != nil {
			return nil, err
		}
		c.charter = ch
	}
	return c.charter, nil
}

// checkContentDir reports a missing content folder as such, rather than as
// a missing site.yaml inside it.
func checkContentDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("content folder: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("content folder %s is not a folder", dir)
	}
	return nil
}

// chainOptions are the chain's options under this configuration, with the
// policy of site.yaml (policyOptions).
func (c *config) chainOptions(env *environment, ch *charter.Charter, readOnly bool) (chain.Options, error) {
	opts, err := policyOptions(ch)
	opts.DataDir, opts.ReadOnly, opts.WalkEvery, opts.Logger = c.Data, readOnly, c.WalkEvery, env.logger
	opts.Keys = keystore.Options{WitnessDir: c.WitnessKeys, Witnesses: c.Witnesses}
	return opts, err
}

// policyOptions are the chain options site.yaml decides, the policy the
// trust document publishes: the documented seams, the witness quorum, the
// Bridge keys, and the log named after base_url's host.
func policyOptions(ch *charter.Charter) (chain.Options, error) {
	origin, err := chain.LogOrigin(ch.BaseURL)
	if err != nil {
		return chain.Options{}, err
	}
	bridge, err := ch.Gate.Published()
	if err != nil {
		return chain.Options{}, err
	}
	return chain.Options{Seams: ch.Ledger.Seams(), WitnessQuorum: ch.Ledger.Quorum(), LogOrigin: origin, BridgeKeys: bridge}, nil
}

// historyFile is the published history under the content folder.
func (c *config) historyFile() string {
	return filepath.Join(c.Content, "ledger", "history.jsonl")
}

// liveLimit is the POST limit in the live edge's terms.
func (c *config) liveLimit() live.Limit {
	return live.Limit{Max: c.PostLimit.Max, Window: c.PostLimit.Window}
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
