package eval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/proofsite/proofsite/live/eval/lexical"
)

// PatternCount is how many precheck patterns the data must hold (spec 8).
const PatternCount = 52

// Where LoadFS reads, relative to the content directory.
const (
	PatternsFile = "eval/patterns.yaml"
	// LexicalFile holds the weights of the AI scan's lexical model
	// (package lexical), trained by cmd/evaltrain.
	LexicalFile  = "eval/lexical.tsv"
	ExemplarsDir = "eval/exemplars"
	// BenignExemplars holds benign texts, many of which resemble attacks
	// on the surface: the lexical model's counterweight.
	BenignExemplars = "benign.txt"
)

// Data is everything the evaluator reads from content: the patterns, the
// categories they belong to, and the lexical model of the offline AI scan.
type Data struct {
	Version    string                    // patterns.yaml "version"
	Categories map[Category]CategoryInfo // every category in Categories
	Patterns   []Pattern
	Lexical    *lexical.Model
	Digest     string // hex SHA-256 over the files LoadFS read, in order
}

// CategoryInfo is what a category means, for flags that come from no
// pattern (the AI scan).
type CategoryInfo struct {
	Article     int    `yaml:"article"`     // the constitution article it offends
	Description string `yaml:"description"` // one sentence: what this category is
	Remediation string `yaml:"remediation"` // one sentence: what to do about it
}

// Pattern is one precheck pattern, as held in patterns.yaml.
type Pattern struct {
	ID       string   `yaml:"id"`
	Title    string   `yaml:"title"`
	Category Category `yaml:"category"`
	Severity Severity `yaml:"severity"`
	// Scope says whether the pattern reads prompts, responses or both
	// (Govern); Evaluate reads every pattern whose scope covers input.
	Scope Scope `yaml:"scope"`
	// Regex is an RE2 expression (Go syntax). Unless CaseSensitive, it is
	// matched against the view with its letters lowered in every script
	// (lowerRune), so it must be written in lower case.
	Regex         string `yaml:"regex"`
	CaseSensitive bool   `yaml:"case_sensitive"`
	// Prefilter, when set, replaces the literals derived from Regex: the
	// regex runs on a view only if one of them occurs in it (lowered).
	Prefilter []string `yaml:"prefilter"`
	// MinDigits, when set, skips views whose longest run of digits (each
	// at most two separators from the next) is shorter than this.
	MinDigits int `yaml:"min_digits"`
	// Validator checks each regex match (or, for a signal validator with
	// no regex, the normalisation's findings); see validators.go.
	Validator string  `yaml:"validator"`
	Threshold float64 `yaml:"threshold"` // the validator's parameter, when it takes one
	// Explanation says, for a person, why a match matters.
	Explanation string `yaml:"explanation"`
	Article     int    `yaml:"article"`
	Remediation string `yaml:"remediation"`
	// Profile, for output-scope patterns, names the output-profile field
	// the pattern feeds in Govern (refusal, system_prompt_leak,
	// exfiltration_link); empty for most.
	Profile  string   `yaml:"profile"`
	Examples Examples `yaml:"examples"`
}

// Examples are texts the test suite runs: each positive must raise the
// pattern, each negative must not.
type Examples struct {
	Positive []string `yaml:"positive"`
	Negative []string `yaml:"negative"`
}

// Exemplar is one labelled text of the lexical model's training set.
type Exemplar struct {
	ID       string   // file name without .txt, '#', line number
	Category Category // empty for the benign contrast set
	Text     string
}

// patternsFile is the layout of patterns.yaml.
type patternsFile struct {
	Version    string                    `yaml:"version"`
	Categories map[Category]CategoryInfo `yaml:"categories"`
	Patterns   []Pattern                 `yaml:"patterns"`
}

// LoadFS reads the patterns and the lexical model from a content
// directory (PatternsFile, LexicalFile) and checks them. It reports every
// problem it finds, joined; each is a *DataError matching ErrData.
func LoadFS(fsys fs.FS) (Data, error) {
	digest := sha256.New()
	raw, err := fs.ReadFile(fsys, PatternsFile)
	if err != nil {
		return Data{}, &DataError{File: PatternsFile, Msg: err.Error()}
	}
	digest.Write(raw)
	var pf patternsFile
	if err := yaml.UnmarshalWithOptions(raw, &pf, yaml.DisallowUnknownField()); err != nil {
		return Data{}, &DataError{File: PatternsFile, Msg: yaml.FormatError(err, false, true)}
	}
	d := Data{Version: pf.Version, Categories: pf.Categories, Patterns: pf.Patterns}

	raw, err = fs.ReadFile(fsys, LexicalFile)
	if err != nil {
		return Data{}, &DataError{File: LexicalFile, Msg: err.Error()}
	}
	digest.Write(raw)
	if d.Lexical, err = lexical.Parse(bytes.NewReader(raw)); err != nil {
		return Data{}, &DataError{File: LexicalFile, Msg: err.Error()}
	}

	d.Digest = hex.EncodeToString(digest.Sum(nil))
	errs := d.check()
	if len(errs) > 0 {
		return Data{}, joinErrors(errs)
	}
	return d, nil
}

// parseExemplars reads one exemplar per line; blank lines and lines
// starting with '#' are skipped, and "\n" in a line stands for a newline.
func parseExemplars(base string, cat Category, raw []byte) []Exemplar {
	var out []Exemplar
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, Exemplar{ID: fmt.Sprintf("%s#%d", base, n), Category: cat,
			Text: strings.ReplaceAll(line, `\n`, "\n")})
	}
	return out
}

// check reports the structural problems of d: counts, identifiers,
// enumerations and required text. Regexes are compiled by New.
func (d *Data) check() []error {
	var errs []error
	bad := func(id, format string, args ...any) {
		errs = append(errs, &DataError{File: PatternsFile, Pattern: id, Msg: fmt.Sprintf(format, args...)})
	}
	for _, c := range Categories {
		info, ok := d.Categories[c]
		switch {
		case !ok:
			bad("", "category %s is not described under categories", c)
		case info.Article <= 0 || info.Description == "" || info.Remediation == "":
			bad("", "category %s needs an article, a description and a remediation", c)
		}
	}
	for c := range d.Categories {
		if !c.Valid() {
			bad("", "unknown category %q under categories", c)
		}
	}
	if len(d.Patterns) != PatternCount {
		bad("", "holds %d patterns; the precheck has exactly %d", len(d.Patterns), PatternCount)
	}
	seen := map[string]bool{}
	for _, p := range d.Patterns {
		id := p.ID
		if id == "" {
			bad("", "a pattern has no id (title %q)", p.Title)
			continue
		}
		if seen[id] {
			bad(id, "duplicate id")
		}
		seen[id] = true
		if !p.Category.Valid() {
			bad(id, "unknown category %q", p.Category)
		}
		if p.Severity.Weight() < 0 {
			bad(id, "unknown severity %q (info, low, medium, high or critical)", p.Severity)
		}
		if !slices.Contains([]Scope{"", ScopeInput, ScopeOutput, ScopeBoth}, p.Scope) {
			bad(id, "unknown scope %q (input, output or both)", p.Scope)
		}
		if !slices.Contains(profiles, p.Profile) {
			bad(id, "unknown profile %q (refusal, system_prompt_leak or exfiltration_link)", p.Profile)
		}
		if p.Title == "" || p.Explanation == "" || p.Remediation == "" {
			bad(id, "needs a title, an explanation and a remediation")
		}
		if p.Article <= 0 {
			bad(id, "needs the constitution article it offends")
		}
		if p.Regex == "" && p.Validator == "" {
			bad(id, "needs a regex, a validator or both")
		}
		if len(p.Examples.Positive) == 0 || len(p.Examples.Negative) == 0 {
			bad(id, "needs at least one positive and one negative example")
		}
	}
	if d.Lexical == nil {
		errs = append(errs, &DataError{File: LexicalFile, Msg: "no lexical model"})
	} else {
		for _, c := range d.Lexical.Classes[1:] {
			if !Category(c).Valid() {
				errs = append(errs, &DataError{File: LexicalFile, Msg: fmt.Sprintf("class %q is not a category", c)})
			}
		}
	}
	return errs
}

// LoadExemplars reads the exemplars (ExemplarsDir/*.txt, one file per
// category plus BenignExemplars): the labelled texts the lexical model is
// trained on, with the corpus's dev split (cmd/evaltrain). The evaluator
// itself does not read them.
func LoadExemplars(fsys fs.FS) ([]Exemplar, error) {
	files, err := fs.Glob(fsys, ExemplarsDir+"/*.txt")
	if err != nil || len(files) == 0 {
		return nil, &DataError{File: ExemplarsDir, Msg: "no exemplar files (*.txt)"}
	}
	var out []Exemplar
	var errs []error
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			errs = append(errs, &DataError{File: f, Msg: err.Error()})
			continue
		}
		base := strings.TrimSuffix(path.Base(f), ".txt")
		var cat Category
		if path.Base(f) != BenignExemplars {
			cat = Category(base)
			if !cat.Valid() {
				errs = append(errs, &DataError{File: f, Msg: fmt.Sprintf("%q is not a category (name the file after one, or %s)", base, BenignExemplars)})
				continue
			}
		}
		out = append(out, parseExemplars(base, cat, raw)...)
	}
	counts := map[Category]int{}
	for _, e := range out {
		counts[e.Category]++
	}
	for _, c := range []Category{"", PromptInjection, Jailbreak, HarmfulContent, Exfiltration, GovernanceClaims} {
		if counts[c] == 0 && len(errs) == 0 {
			errs = append(errs, &DataError{File: ExemplarsDir, Msg: fmt.Sprintf("no exemplars for %q (benign when empty)", c)})
		}
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return out, nil
}
