package quality

import (
	"fmt"
	"slices"
	"strings"
)

// Prediction is what a detector said of one sample.
type Prediction struct {
	Flagged  bool
	Category string // the primary predicted category, in the detector's vocabulary; "" when not flagged
}

// Row is one line of a quality table.
type Row struct {
	Category  string
	Samples   int     // labelled with the category
	Flagged   int     // of those, flagged
	Predicted int     // flagged samples whose predicted category maps to this one
	Correct   int     // of those, labelled with it
	Recall    float64 // Flagged / Samples
	Precision float64 // Correct / Predicted (1 when nothing was predicted)
	F1        float64
}

// Table is a detector's quality on one set of samples.
type Table struct {
	Categories  []Row // per attack category
	Obfuscation []Row // per obfuscation method (recall only)
	Benign      []Row // per benign category: Samples and Flagged (false positives)
	Overall     Row   // attack against benign
	FPR         float64
}

// Score compares predictions with labels. mapCategory maps a predicted
// category to the labels' vocabulary (nil: identity).
func Score(samples []Sample, preds []Prediction, mapCategory func(string) string) Table {
	if mapCategory == nil {
		mapCategory = func(c string) string { return c }
	}
	rows := map[string]*Row{}
	obf := map[string]*Row{}
	benign := map[string]*Row{}
	get := func(m map[string]*Row, c string) *Row {
		if m[c] == nil {
			m[c] = &Row{Category: c}
		}
		return m[c]
	}
	var t Table
	var benignN, benignFlagged int
	for i, s := range samples {
		p := preds[i]
		if s.Label == Benign {
			r := get(benign, s.Category)
			r.Samples++
			benignN++
			if p.Flagged {
				r.Flagged++
				benignFlagged++
				t.Overall.Predicted++
			}
			continue
		}
		r := get(rows, s.Category)
		r.Samples++
		t.Overall.Samples++
		if p.Flagged {
			r.Flagged++
			t.Overall.Flagged++
			t.Overall.Predicted++
			t.Overall.Correct++
		}
		if s.Obfuscation != "" {
			o := get(obf, s.Obfuscation)
			o.Samples++
			if p.Flagged {
				o.Flagged++
			}
		}
	}
	for i, s := range samples { // attribution: predicted categories
		p := preds[i]
		if !p.Flagged {
			continue
		}
		c := mapCategory(p.Category)
		if r, ok := rows[c]; ok {
			r.Predicted++
			if s.Label == Attack && s.Category == c {
				r.Correct++
			}
		}
	}
	finish := func(r *Row) Row {
		r.Recall = ratio(r.Flagged, r.Samples)
		r.Precision = 1
		if r.Predicted > 0 {
			r.Precision = ratio(r.Correct, r.Predicted)
		}
		if r.Recall+r.Precision > 0 {
			r.F1 = 2 * r.Recall * r.Precision / (r.Recall + r.Precision)
		}
		return *r
	}
	for _, k := range sortedKeys(rows) {
		t.Categories = append(t.Categories, finish(rows[k]))
	}
	for _, k := range sortedKeys(obf) {
		t.Obfuscation = append(t.Obfuscation, finish(obf[k]))
	}
	for _, k := range sortedKeys(benign) {
		t.Benign = append(t.Benign, finish(benign[k]))
	}
	t.Overall.Category = "all attacks"
	t.Overall = finish(&t.Overall)
	t.FPR = ratio(benignFlagged, benignN)
	return t
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func sortedKeys(m map[string]*Row) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Compare renders two detectors' tables on the same samples side by side
// as markdown.
func Compare(title string, ours, base Table, oursName, baseName string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", title)
	fmt.Fprintf(&b, "| category | samples | %s recall | precision | F1 | %s recall | precision | F1 |\n", oursName, baseName)
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|\n")
	row := func(o, s Row) {
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", o.Category, o.Samples,
			o.Recall, o.Precision, o.F1, s.Recall, s.Precision, s.F1)
	}
	for i := range ours.Categories {
		row(ours.Categories[i], base.Categories[i])
	}
	row(ours.Overall, base.Overall)
	if len(ours.Obfuscation) > 0 {
		b.WriteString("\n| obfuscation | samples | " + oursName + " recall | " + baseName + " recall |\n|---|--:|--:|--:|\n")
		for i, o := range ours.Obfuscation {
			fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f |\n", o.Category, o.Samples, o.Recall, base.Obfuscation[i].Recall)
		}
	}
	b.WriteString("\n| benign | samples | " + oursName + " flagged | FPR | " + baseName + " flagged | FPR |\n|---|--:|--:|--:|--:|--:|\n")
	for i, o := range ours.Benign {
		s := base.Benign[i]
		fmt.Fprintf(&b, "| %s | %d | %d | %.3f | %d | %.3f |\n", o.Category, o.Samples, o.Flagged, o.Recall, s.Flagged, s.Recall)
	}
	fmt.Fprintf(&b, "| all benign | %d | | **%.3f** | | %.3f |\n", sum(ours.Benign), ours.FPR, base.FPR)
	return b.String()
}

func sum(rows []Row) int {
	n := 0
	for _, r := range rows {
		n += r.Samples
	}
	return n
}
