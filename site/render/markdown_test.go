package render

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/dlclark/regexp2/v2"
	"github.com/proofsite/proofsite/templates"
)

// TestCodeContrast reads the published highlighting rules back and checks,
// in both colour schemes, that every token class has a colour of its own
// (none falls through to the other scheme's) with a WCAG AA contrast of at
// least 4.5:1 against the background it is drawn on.
func TestCodeContrast(t *testing.T) {
	css, err := codeCSS()
	if err != nil {
		t.Fatal(err)
	}
	light, dark, ok := bytes.Cut(css, []byte("@media (prefers-color-scheme: dark)"))
	if !ok {
		t.Fatal("no dark scheme in the code rules")
	}
	// The code background is the stylesheet's --card, light then dark.
	cards := regexp.MustCompile(`--card: (#[0-9a-f]{6})`).FindAllSubmatch(templates.Stylesheet, -1)
	if len(cards) != 2 {
		t.Fatalf("the stylesheet defines --card %d times, want 2 (light, dark)", len(cards))
	}
	rule := regexp.MustCompile(`\.chroma \.([a-z0-9]+) \{ color: (#[0-9a-f]{6})(?:; background-color: (transparent|#[0-9a-f]{6}))?`)
	for i, scheme := range []struct {
		name  string
		rules []byte
	}{{"light", light}, {"dark", dark}} {
		t.Run(scheme.name, func(t *testing.T) {
			page := chroma.ParseColour(string(cards[i][1]))
			seen := map[string]bool{}
			for _, m := range rule.FindAllSubmatch(scheme.rules, -1) {
				class, fg, bg := string(m[1]), chroma.ParseColour(string(m[2])), page
				if len(m[3]) > 0 && string(m[3]) != "transparent" {
					bg = chroma.ParseColour(string(m[3]))
				}
				seen[class] = true
				if c := contrastRatio(fg, bg); c < 4.5 {
					t.Errorf(".%s: %s on %s has contrast %.2f:1, under 4.5:1", class, fg, bg, c)
				}
			}
			for tt, class := range chroma.StandardTypes {
				if isToken(tt) && class != "" && !seen[class] {
					t.Errorf("token class .%s has no colour in the %s scheme", class, scheme.name)
				}
			}
		})
	}
}

// TestContrastRatio checks the WCAG formula on known pairs.
func TestContrastRatio(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#ffffff", 1},
		{"#767676", "#ffffff", 4.54},
		{"#0b5cad", "#fdfdfc", 6.55},
	} {
		got := contrastRatio(chroma.ParseColour(tc.a), chroma.ParseColour(tc.b))
		if got < tc.want-0.01 || got > tc.want+0.01 {
			t.Errorf("contrast(%s, %s) = %.3f, want %.2f", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestTablesScroll checks that every markdown table sits in its own
// focusable, labelled scroll region.
func TestTablesScroll(t *testing.T) {
	var out bytes.Buffer
	src := []byte("| Key | Value |\n|---|---|\n| `a_long_identifier` | 1 |\n\ntext\n\n- a list item\n\n  > | x |\n  > |---|\n  > | y |\n")
	if _, err := convert(newMarkdown(), src, &out); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	for _, want := range []string{
		`<div class="table-scroll" role="region" tabindex="0" aria-label="Table 1: Key, Value">` + "\n<table>",
		`<div class="table-scroll" role="region" tabindex="0" aria-label="Table 2: x">` + "\n<table>", // in a quote in a list
	} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q in\n%s", want, html)
		}
	}
	if strings.Count(html, "</table>\n</div>") != 2 {
		t.Errorf("tables not closed inside their regions:\n%s", html)
	}
}

// TestTableOfContents: a long page gets its level-2 headings with the
// level-3 headings under them; a short one gets none.
func TestTableOfContents(t *testing.T) {
	long := "## One\n\n### One a\n\n## Two `x`\n\n## Three\n\n" + strings.Repeat("Filler text. ", tocMinBytes/12)
	toc, err := convert(newMarkdown(), []byte(long), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(toc) != 3 || toc[0].ID != "one" || len(toc[0].Children) != 1 || toc[0].Children[0].ID != "one-a" || toc[1].Text != "Two x" {
		t.Errorf("toc %+v", toc)
	}
	short, _ := convert(newMarkdown(), []byte("## One\n\n## Two\n\n## Three\n"), &bytes.Buffer{})
	if short != nil {
		t.Errorf("a short page has a toc: %+v", short)
	}
}

// TestCodeBlocksFocusable: a code block scrolls sideways when a line is
// long, so every one takes the keyboard focus.
func TestCodeBlocksFocusable(t *testing.T) {
	var out bytes.Buffer
	src := []byte("```go\nx := 1\n```\n\n```\nplain\n```\n\n    indented\n")
	if _, err := convert(newMarkdown(), src, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), `<pre tabindex="0"`); got != 3 || strings.Count(out.String(), "<pre") != 3 {
		t.Errorf("%d of 3 code blocks are focusable:\n%s", got, out.String())
	}
}

// TestUntimedLexers checks that the lexers the site highlights with have
// no wall-clock limit left on any rule once untime has run, and that
// chroma still sets one on a lexer it compiles (when it stops, untime can
// go): a rule that runs out of time lexes differently, so a loaded machine
// built different pages from the same content.
func TestUntimedLexers(t *testing.T) {
	for _, lang := range []string{"go", "sh", "json", "yaml", "python", "html"} {
		l, ok := lexers.Get(lang).(*chroma.RegexLexer)
		if !ok {
			t.Fatalf("%s: not a regexp lexer", lang)
		}
		fresh, err := compiledRules(chroma.MustNewLexer(l.Config(), l.MustRules))
		if err != nil {
			t.Fatal(err)
		}
		if timeouts(fresh)[regexp2.DefaultMatchTimeout] > 0 {
			t.Errorf("%s: chroma compiled a rule without a time limit: untime may be unneeded", lang)
		}
		if err := untime(l); err != nil {
			t.Fatal(err)
		}
		rules, err := compiledRules(l)
		if err != nil {
			t.Fatal(err)
		}
		if got := timeouts(rules); len(got) != 1 || got[regexp2.DefaultMatchTimeout] == 0 {
			t.Errorf("%s: rules by time limit after untime: %v", lang, got)
		}
	}
}

// timeouts counts rules by their match time limit.
func timeouts(rules map[string][]*chroma.CompiledRule) map[time.Duration]int {
	out := map[time.Duration]int{}
	for _, state := range rules {
		for _, r := range state {
			if r.Regexp != nil {
				out[r.Regexp.MatchTimeout]++
			}
		}
	}
	return out
}
