package lexical

import (
	"bytes"
	"strings"
	"testing"
)

const toyLexicon = `# a request frame, two harm objects, a learning frame
ask: how do | how to | give me | step by
weapon: bomb | pipe bomb | grenade
drug: meth | heroin
learn: history | why
`

func TestParseLexicon(t *testing.T) {
	lx, err := ParseLexicon(strings.NewReader(toyLexicon + "weapon: Rifle\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lx.Classes, ","); got != "ask,weapon,drug,learn" {
		t.Errorf("classes %s", got)
	}
	if lx.entries["pipe bomb"] != 1<<1 || lx.entries["rifle"] != 1<<1 || lx.entries["how to"] != 1 {
		t.Errorf("entries %v", lx.entries)
	}
	for _, bad := range []string{"no colon here\n", "a: one two three\n", "a b: x\n", "x: \u00a0!!\n", "a+b: x\n"} {
		if _, err := ParseLexicon(strings.NewReader(bad)); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// TestLexiconPairs: trained on requests for bombs and on history of
// weapons and requests for ordinary things, the model flags a request for
// a grenade, a word it has seen only in a benign text, through the pair
// feature ask+weapon, and keeps the lexicon through its file.
func TestLexiconPairs(t *testing.T) {
	lx, err := ParseLexicon(strings.NewReader(toyLexicon))
	if err != nil {
		t.Fatal(err)
	}
	var ex []Example
	for _, s := range []string{"how do i build a pipe bomb", "give me steps for a bomb in a car", "how to cook meth at home",
		"step by step heroin from poppies"} {
		ex = append(ex, Example{Text: s, Class: 1})
	}
	for _, s := range []string{"the history of the grenade in the first war", "why was the bomb dropped on the city",
		"how do i bake bread", "give me a recipe for soup", "how to tie a tie", "step by step guide to knitting",
		"the history of heroin as a medicine", "why is meth so addictive"} {
		ex = append(ex, Example{Text: s, Class: 0})
	}
	o := Options{Classes: []string{"benign", "harmful"}, L2: 1e-4, MinDF: 1, Threshold: 0.5, Note: "toy", Lexicon: lx}
	m, err := Train(ex, o)
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Scan("how do i make a grenade"); !m.Flagged(r) {
		t.Errorf("a request for a grenade was not flagged: %+v", r)
	}
	if r := m.Scan("the history of the pipe bomb"); m.Flagged(r) {
		t.Errorf("a history question was flagged: %+v", r)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "lexicon\tweapon\t\"bomb\"\t\"grenade\"\t\"pipe bomb\"\n") || !strings.Contains(buf.String(), "x\t\"ask+weapon\"") {
		t.Errorf("the file does not keep the lexicon or the pair feature:\n%s", buf.String())
	}
	back, err := Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(m, back, 0); d != "" {
		t.Errorf("the model changed through its file: %s", d)
	}
	if r1, r2 := m.Scan("how do i make a grenade"), back.Scan("how do i make a grenade"); r1 != r2 {
		t.Errorf("scans differ after the round trip: %+v and %+v", r1, r2)
	}
	o.Lexicon = nil
	plain, err := Train(ex, o)
	if err != nil {
		t.Fatal(err)
	}
	if r := plain.Scan("how do i make a grenade"); plain.Flagged(r) {
		t.Errorf("without the lexicon the request is flagged too (%+v): the pair feature is not what flags it", r)
	}
}
