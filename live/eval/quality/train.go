package quality

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/proofsite/proofsite/live/eval"
	"github.com/proofsite/proofsite/live/eval/lexical"
)

// LexicalClasses are the lexical model's classes: benign, then the attack
// categories it learns. Secrets and personal data are the validators'
// business, and obfuscation says how, not what.
var LexicalClasses = []string{"benign", string(eval.PromptInjection), string(eval.Jailbreak),
	string(eval.Exfiltration), string(eval.HarmfulContent), string(eval.GovernanceClaims)}

// LexiconFile is the source of the lexical model's lexicon (see
// lexical.Lexicon) in a content directory. cmd/evaltrain reads it; the
// trained model keeps it, so the evaluator does not.
const LexiconFile = "eval/lexicon.txt"

// LoadLexicon reads LexiconFile from a content directory, its entries
// read as the evaluator reads text (eval.LexicalText: folded and
// lowered), so that an entry written in Cyrillic ("врагами") matches the
// folded words the model is given ("bpaгamи").
func LoadLexicon(fsys fs.FS) (*lexical.Lexicon, error) {
	raw, err := fs.ReadFile(fsys, LexiconFile)
	if err != nil {
		return nil, fmt.Errorf("quality: %w", err)
	}
	lines := strings.Split(string(raw), "\n")
	for i, l := range lines {
		if name, list, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines[i] = name + ":" + eval.LexicalText(list)
		}
	}
	lx, err := lexical.ParseLexicon(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		return nil, fmt.Errorf("quality: %s: %w", LexiconFile, err)
	}
	return lx, nil
}

// DefaultTrainConfig is how cmd/evaltrain trains the committed model.
var DefaultTrainConfig = TrainConfig{Options: lexical.Options{L2: 1e-6}, Folds: 5, Seed: 20261123, TargetFPR: 0.01}

// TrainConfig configures TrainLexical.
type TrainConfig struct {
	Options   lexical.Options // Classes is set by TrainLexical; cmd/evaltrain sets Lexicon (LoadLexicon)
	Folds     int             // cross-validation folds over the dev split; default 5
	Seed      uint64          // deals the folds
	TargetFPR float64         // the threshold is the lowest whose out-of-fold FPR is at most this; default 0.01
}

// CVReport is what cross-validation on the dev split measured.
type CVReport struct {
	Threshold float64
	Samples   int     // dev samples scored out of fold
	FPR       float64 // at Threshold, on the dev split's benign samples
	Recall    float64 // at Threshold, on its attacks of the model's classes
	PerClass  map[string]float64
}

// String renders the report in a few lines.
func (r CVReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cross-validation on the dev split (%d samples out of fold): threshold %.3f, FPR %.3f, recall %.3f\n", r.Samples, r.Threshold, r.FPR, r.Recall)
	for _, c := range LexicalClasses[1:] {
		fmt.Fprintf(&b, "  %s recall %.3f\n", c, r.PerClass[c])
	}
	return b.String()
}

// lexicalExamples turns the dev split and the exemplars into training
// examples: plain samples of the model's classes, benign ones included,
// and every exemplar. Obfuscated twins are left out (the evaluator's
// normaliser undoes what it can before the model reads a text), and so are
// attacks embedded in a benign document, whose benign sentences would
// teach the model that the document is the attack (Scan reads windows of
// a few sentences, so the attack alone is what it must learn). Every
// text is read as the evaluator reads it (eval.LexicalText: folded and
// lowered), so the model learns the features it will find. owner is as lexical.CrossValidate
// wants it: dev samples are scored, exemplars always trained on. Each class's
// examples weigh as much in total as the benign ones.
func lexicalExamples(dev []Sample, exemplars []eval.Exemplar) ([]lexical.Example, []int) {
	var ex []lexical.Example
	var owner []int
	class := func(label, category string) int {
		if label == Benign || category == "" {
			return 0
		}
		return slices.Index(LexicalClasses, category)
	}
	for _, s := range dev {
		c := class(s.Label, s.Category)
		if c < 0 || s.Obfuscation != "" || strings.HasSuffix(s.ID, ":embedded") {
			continue
		}
		owner = append(owner, len(ex))
		ex = append(ex, lexical.Example{Text: eval.LexicalText(s.Text), Class: c})
	}
	for _, e := range exemplars {
		c := class("", string(e.Category))
		if c < 0 {
			continue
		}
		ex = append(ex, lexical.Example{Text: eval.LexicalText(e.Text), Class: c})
		owner = append(owner, -1)
	}
	counts := make([]int, len(LexicalClasses))
	for _, e := range ex {
		counts[e.Class]++
	}
	for i := range ex {
		ex[i].Weight = float64(counts[0]) / float64(counts[ex[i].Class]) / float64(len(LexicalClasses)-1)
		if ex[i].Class == 0 {
			ex[i].Weight = 1
		}
	}
	return ex, owner
}

// TrainLexical trains the lexical model on the dev split and the
// exemplars: it cross-validates on the dev split to choose the threshold,
// then trains on everything (FinalLexical).
func TrainLexical(dev []Sample, exemplars []eval.Exemplar, cfg TrainConfig) (*lexical.Model, CVReport, error) {
	if cfg.Folds == 0 {
		cfg.Folds = 5
	}
	if cfg.TargetFPR == 0 {
		cfg.TargetFPR = 0.01
	}
	cfg.Options.Classes = LexicalClasses
	ex, owner := lexicalExamples(dev, exemplars)
	oof, err := lexical.CrossValidate(ex, owner, cfg.Options, cfg.Folds, cfg.Seed)
	if err != nil {
		return nil, CVReport{}, err
	}
	rep := chooseThreshold(ex, owner, oof, cfg.TargetFPR)
	note := fmt.Sprintf("trained by cmd/evaltrain on the dev split, content/eval/exemplars and content/eval/lexicon.txt; threshold %.4f from %d-fold cross-validation (out-of-fold FPR %.3f, recall %.3f)",
		rep.Threshold, cfg.Folds, rep.FPR, rep.Recall)
	m, err := FinalLexical(dev, exemplars, cfg, rep.Threshold, note)
	if err != nil {
		return nil, CVReport{}, err
	}
	return m, rep, nil
}

// FinalLexical is TrainLexical's last step: it trains on all of the dev
// split and the exemplars with a threshold already chosen.
func FinalLexical(dev []Sample, exemplars []eval.Exemplar, cfg TrainConfig, threshold float64, note string) (*lexical.Model, error) {
	cfg.Options.Classes = LexicalClasses
	cfg.Options.Threshold, cfg.Options.Note = threshold, note
	ex, _ := lexicalExamples(dev, exemplars)
	return lexical.Train(ex, cfg.Options)
}

// chooseThreshold picks the lowest threshold whose out-of-fold
// false-positive rate is at most target, rounded up to three decimals.
func chooseThreshold(ex []lexical.Example, owner []int, oof []lexical.Result, target float64) CVReport {
	var benign []float64
	for i, e := range ex {
		if owner[i] == i && e.Class == 0 {
			benign = append(benign, oof[i].Attack)
		}
	}
	slices.Sort(benign)
	allowed := int(target * float64(len(benign)))
	t := 0.5
	if len(benign) > 0 {
		t = max(benign[len(benign)-1-allowed]+0.001, 0.05)
	}
	t = float64(int(t*1000+0.999)) / 1000
	rep := CVReport{Threshold: min(t, 0.999), PerClass: map[string]float64{}}
	var neg, fp, pos, tp int
	per := map[int][2]int{}
	for i, e := range ex {
		if owner[i] != i {
			continue
		}
		rep.Samples++
		hit := oof[i].Attack >= rep.Threshold
		if e.Class == 0 {
			neg++
			if hit {
				fp++
			}
			continue
		}
		pos++
		c := per[e.Class]
		c[0]++
		if hit {
			tp++
			c[1]++
		}
		per[e.Class] = c
	}
	rep.FPR, rep.Recall = ratio(fp, neg), ratio(tp, pos)
	for c, n := range per {
		rep.PerClass[LexicalClasses[c]] = ratio(n[1], n[0])
	}
	return rep
}
