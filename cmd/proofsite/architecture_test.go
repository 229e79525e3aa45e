package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const mod = "github.com/proofsite/proofsite"

// modulePackage is one package of the module, as go list describes it.
type modulePackage struct {
	path, dir, name string
	imports         []string // direct, non-test
	deps            []string // transitive, non-test
}

// listModule lists every package of the module.
func listModule(t *testing.T) []modulePackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{.Name}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []modulePackage
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			t.Fatalf("go list line %q", line)
		}
		pkgs = append(pkgs, modulePackage{path: f[0], dir: f[1], name: f[2], imports: strings.Fields(f[3]), deps: strings.Fields(f[4])})
	}
	return pkgs
}

// matching returns the packages a pattern ("ledger", "site/...") names.
func matching(pattern string, pkgs []modulePackage) []modulePackage {
	full, tree := mod+"/"+strings.TrimSuffix(pattern, "/..."), strings.HasSuffix(pattern, "/...")
	var out []modulePackage
	for _, p := range pkgs {
		if p.path == full || (tree && strings.HasPrefix(p.path, full+"/")) {
			out = append(out, p)
		}
	}
	return out
}

// under reports whether dep is prefix or a package below it.
func under(dep, prefix string) bool { return dep == prefix || strings.HasPrefix(dep, prefix+"/") }

// TestDependencyDirections keeps the edges the design draws:
// cmd -> site, live -> ledger, and nothing else between our packages. A
// rule whose pattern names no package fails: a renamed package must not
// silently leave its rule behind.
func TestDependencyDirections(t *testing.T) {
	pkgs := listModule(t)
	const badger = "github.com/dgraph-io/badger/v4"
	stateful := []string{mod + "/ledger/store", mod + "/ledger/chain", mod + "/ledger/keystore"}
	ours := []string{mod + "/site", mod + "/live", mod + "/cmd", mod + "/templates"}
	// The pure ledger's only libraries: jsontext (RFC 8785
	// canonicalization), what its transparency-log layer (ledger/tlog)
	// uses, and curve25519-voi's ed25519 signer with what it imports.
	pure := []string{mod + "/ledger", "github.com/go-json-experiment/json", "github.com/transparency-dev/merkle",
		"github.com/transparency-dev/formats/log", "golang.org/x/mod/sumdb/note"}
	signer := []string{"github.com/oasisprotocol/curve25519-voi", "golang.org/x/sys/cpu", "golang.org/x/crypto/chacha20", "golang.org/x/crypto/internal/alias"}
	tests := []struct {
		pattern   string
		forbidden []string          // import path prefixes
		except    map[string]string // package -> a forbidden prefix it may use anyway
		only      []string          // when set, every non-standard dependency is under one of these
	}{
		{pattern: "ledger", forbidden: slices.Concat(ours, stateful, []string{badger, mod + "/ledger/gate", mod + "/ledger/charter"}), only: slices.Concat(pure, signer)},
		// The Merkle maths and signed checkpoints, below the ledger.
		{pattern: "ledger/tlog", forbidden: slices.Concat(ours, []string{mod + "/ledger"}), only: pure[1:]},
		// The charter and the gate are pure: values and decisions, no disk.
		{pattern: "ledger/charter", forbidden: slices.Concat(ours, stateful, []string{badger})},
		{pattern: "ledger/gate", forbidden: slices.Concat(ours, stateful, []string{badger, mod + "/ledger/charter"})},
		{pattern: "ledger/keystore", forbidden: slices.Concat(ours, []string{badger, mod + "/ledger/store", mod + "/ledger/chain"})},
		{pattern: "ledger/store", forbidden: slices.Concat(ours, []string{mod + "/ledger/chain", mod + "/ledger/keystore"})},
		{pattern: "ledger/chain", forbidden: ours},
		// site/content validates the gate policy with the checkpoint's own
		// vocabulary and key rules (pure packages), so policy errors point
		// at a line of site.yaml; it never reaches the chain's state.
		{pattern: "site/...", forbidden: slices.Concat(stateful, []string{mod + "/live", mod + "/cmd", badger, "github.com/gofiber/fiber/v2"})},
		{pattern: "site/content", forbidden: []string{mod + "/templates"}},
		// The live edge reads the chain through its own small interfaces;
		// cmd passes ledger/chain in.
		// live/memory/dual keeps memories in a Badger folder of its own,
		// never the chain's; the routes and the towns reach it through
		// interfaces over live/memory's values, so no other package of live
		// links Badger.
		{pattern: "live/...", forbidden: slices.Concat(stateful, []string{mod + "/site", mod + "/cmd", mod + "/templates", badger}),
			except: map[string]string{mod + "/live/memory/dual": badger}},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			matched := matching(tc.pattern, pkgs)
			if len(matched) == 0 {
				t.Fatalf("the pattern %s names no package: update the rule", tc.pattern)
			}
			for _, p := range matched {
				for _, d := range p.deps {
					for _, f := range tc.forbidden {
						if under(d, f) && tc.except[p.path] != f {
							t.Errorf("%s depends on %s", p.path, d)
						}
					}
					standard := !strings.Contains(strings.Split(d, "/")[0], ".")
					if tc.only != nil && !standard && !slices.ContainsFunc(tc.only, func(o string) bool { return under(d, o) }) {
						t.Errorf("%s depends on %s, which is not one of its libraries", p.path, d)
					}
				}
			}
		})
	}
}

func TestMatchingNamesPackages(t *testing.T) {
	pkgs := []modulePackage{{path: mod + "/site"}, {path: mod + "/site/render"}, {path: mod + "/sitemap"}}
	for _, tc := range []struct {
		pattern string
		want    int
	}{{"site", 1}, {"site/...", 2}, {"site/render", 1}, {"sites/...", 0}, {"live/...", 0}} {
		if got := len(matching(tc.pattern, pkgs)); got != tc.want {
			t.Errorf("%s matches %d packages, want %d", tc.pattern, got, tc.want)
		}
	}
}

// TestTemplatesOnlyFromRender: the templ components are imported by
// site/render alone, and by the one benchmark that needs their stylesheet.
func TestTemplatesOnlyFromRender(t *testing.T) {
	allowed := map[string]string{
		mod + "/site/render":   "renders the pages",
		mod + "/cmd/sitebench": "gives the Hugo peer the same stylesheet, so both sites style the same bytes",
	}
	for _, p := range listModule(t) {
		if _, ok := allowed[p.path]; !ok && slices.Contains(p.imports, mod+"/templates") {
			t.Errorf("%s imports templates; only site/render may", p.path)
		}
	}
}

// processCalls are what only a program may do: end the process, read the
// command line's flags, replace the default loggers.
var processCalls = map[string][]string{
	"os":       {"Exit"},
	"log":      {"Fatal", "Fatalf", "Fatalln", "SetOutput", "SetFlags", "SetPrefix"},
	"log/slog": {"SetDefault", "SetLogLoggerLevel"},
}

// processRules lists what a Go file does that only a program may: import
// flag, or use one of processCalls.
func processRules(fset *token.FileSet, f *ast.File) []string {
	var found []string
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
		if p == "flag" {
			found = append(found, fset.Position(imp.Pos()).String()+": imports flag")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok {
			if p, ok := names[id.Name]; ok && slices.Contains(processCalls[p], sel.Sel.Name) {
				found = append(found, fset.Position(sel.Pos()).String()+": uses "+p+"."+sel.Sel.Name)
			}
		}
		return true
	})
	return found
}

func TestProcessRules(t *testing.T) {
	tests := []struct {
		desc, src string
		want      int
	}{
		{"clean", `package x; import "os"; func f() { os.Getenv("A") }`, 0},
		{"exit", `package x; import "os"; func f() { os.Exit(1) }`, 1},
		{"renamed import", `package x; import sys "os"; func f() { sys.Exit(2) }`, 1},
		{"exit as a value", `package x; import "os"; var quit = os.Exit`, 1},
		{"log.Fatal exits", `package x; import "log"; func f() { log.Fatalf("x") }`, 1},
		{"flag", `package x; import "flag"; var v = flag.Bool("v", false, "")`, 1},
		{"default logger", `package x; import ("log"; "log/slog"; "io"); func f() { slog.SetDefault(nil); log.SetOutput(io.Discard) }`, 2},
		{"another package's Exit", `package x; import "github.com/a/os2"; func f() { os2.Exit(1) }`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := processRules(fset, f); len(got) != tc.want {
				t.Errorf("found %q, want %d", got, tc.want)
			}
		})
	}
}

// TestOnlyProgramsExit: only the commands under cmd/ (package main) end
// the process, parse flags or set the default logger; libraries return
// errors and log through an injected *slog.Logger. Test files are programs
// of their own (a TestMain exits, a golden test takes -update) and are not
// checked.
func TestOnlyProgramsExit(t *testing.T) {
	checked := 0
	for _, p := range listModule(t) {
		if p.name == "main" && under(p.path, mod+"/cmd") {
			continue
		}
		files, err := filepath.Glob(filepath.Join(p.dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, v := range processRules(fset, f) {
				t.Errorf("%s: only cmd/ programs may", v)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d files", checked)
	}
}
