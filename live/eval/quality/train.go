package quality

import (
	"context"
	"fmt"
	"io/fs"
	"math"
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
var DefaultTrainConfig = TrainConfig{Options: lexical.Options{L2: 1e-6}, Folds: 5, Seed: 20261123, TargetFPR: 0.0125,
	Floors: map[string]float64{string(eval.Jailbreak): 0.96, string(eval.PromptInjection): 0.96}}

// TrainConfig configures TrainLexical.
type TrainConfig struct {
	Options   lexical.Options // Classes is set by TrainLexical; cmd/evaltrain sets Lexicon (LoadLexicon)
	Folds     int             // cross-validation folds over the dev split; default 5
	Seed      uint64          // deals the folds
	TargetFPR float64         // the out-of-fold FPR the thresholds may add; default 0.01
	// Caught, when set, says which dev samples the evaluator's other
	// stages flag (CaughtByOtherStages). The model then gets one threshold
	// per class (chooseClassThresholds), spending TargetFPR where the
	// model adds the most recall to what the other stages already catch.
	// Without it the model has one threshold (chooseThreshold).
	Caught func(Sample) bool
	// Floors, with Caught, are the out-of-fold recall (with the other
	// stages) below which a class's threshold may not be set while the
	// budget allows it, by class name: the classes whose held-out recall
	// has a target keep a margin when the others would take the budget.
	Floors map[string]float64
}

// CVReport is what cross-validation on the dev split measured.
type CVReport struct {
	Threshold       float64
	ClassThresholds []float64 // per class (index 0 unused) when chosen per class
	Samples         int       // dev samples scored out of fold
	FPR             float64   // at the thresholds, on the dev split's benign samples
	Recall          float64   // at the thresholds, on its attacks of the model's classes
	PerClass        map[string]float64
	// With the other stages (when TrainConfig.Caught is set): the share
	// of dev samples the other stages or the model flag.
	CaughtFPR      float64
	CaughtPerClass map[string]float64
}

// String renders the report in a few lines.
func (r CVReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cross-validation on the dev split (%d samples out of fold): threshold %.3f, FPR %.3f, recall %.3f\n", r.Samples, r.Threshold, r.FPR, r.Recall)
	if r.CaughtPerClass != nil {
		fmt.Fprintf(&b, "  with the other stages: FPR %.3f\n", r.CaughtFPR)
	}
	for i, c := range LexicalClasses[1:] {
		fmt.Fprintf(&b, "  %s recall %.3f", c, r.PerClass[c])
		if r.ClassThresholds != nil {
			fmt.Fprintf(&b, " at threshold %.4f", r.ClassThresholds[i+1])
		}
		if r.CaughtPerClass != nil {
			fmt.Fprintf(&b, ", with the other stages %.3f", r.CaughtPerClass[c])
		}
		fmt.Fprintln(&b)
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
	ex, owner, _ := lexicalSamples(dev, exemplars)
	return ex, owner
}

// lexicalSamples is lexicalExamples that also returns the dev sample of
// each scored example (nil for an exemplar).
func lexicalSamples(dev []Sample, exemplars []eval.Exemplar) ([]lexical.Example, []int, []*Sample) {
	var ex []lexical.Example
	var owner []int
	var from []*Sample
	class := func(label, category string) int {
		if label == Benign || category == "" {
			return 0
		}
		return slices.Index(LexicalClasses, category)
	}
	for i, s := range dev {
		c := class(s.Label, s.Category)
		if c < 0 || s.Obfuscation != "" || strings.HasSuffix(s.ID, ":embedded") {
			continue
		}
		owner = append(owner, len(ex))
		ex = append(ex, lexical.Example{Text: eval.LexicalText(s.Text), Class: c})
		from = append(from, &dev[i])
	}
	for _, e := range exemplars {
		c := class("", string(e.Category))
		if c < 0 {
			continue
		}
		ex = append(ex, lexical.Example{Text: eval.LexicalText(e.Text), Class: c})
		owner = append(owner, -1)
		from = append(from, nil)
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
	return ex, owner, from
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
	ex, owner, from := lexicalSamples(dev, exemplars)
	oof, err := lexical.CrossValidate(ex, owner, cfg.Options, cfg.Folds, cfg.Seed)
	if err != nil {
		return nil, CVReport{}, err
	}
	var rep CVReport
	note := "trained by cmd/evaltrain on the dev split, content/eval/exemplars and content/eval/lexicon.txt; "
	if cfg.Caught != nil {
		caught := make([]bool, len(ex))
		for i, s := range from {
			caught[i] = s != nil && cfg.Caught(*s)
		}
		floors := make([]float64, len(LexicalClasses))
		for c, name := range LexicalClasses {
			floors[c] = cfg.Floors[name]
		}
		rep = chooseClassThresholds(ex, owner, oof, caught, cfg.TargetFPR, floors)
		note += fmt.Sprintf("thresholds per class from %d-fold cross-validation, spending an added out-of-fold FPR of at most %.3f where the model adds the most recall per class to the other stages",
			cfg.Folds, cfg.TargetFPR)
		for c, name := range LexicalClasses {
			if floors[c] > 0 {
				note += fmt.Sprintf(", %s recall at least %.3f", name, floors[c])
			}
		}
		note += fmt.Sprintf(" (out-of-fold FPR %.3f, recall %.3f; with the other stages FPR %.3f)", rep.FPR, rep.Recall, rep.CaughtFPR)
	} else {
		rep = chooseThreshold(ex, owner, oof, cfg.TargetFPR)
		note += fmt.Sprintf("threshold %.4f from %d-fold cross-validation (out-of-fold FPR %.3f, recall %.3f)",
			rep.Threshold, cfg.Folds, rep.FPR, rep.Recall)
	}
	cfg.Options.ClassThresholds = rep.ClassThresholds
	m, err := FinalLexical(dev, exemplars, cfg, rep.Threshold, note)
	if err != nil {
		return nil, CVReport{}, err
	}
	return m, rep, nil
}

// FinalLexical is TrainLexical's last step: it trains on all of the dev
// split and the exemplars with a threshold already chosen (and the class
// thresholds of cfg.Options, when set).
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

// chooseClassThresholds picks one threshold per class (a window counts as
// an attack when its attack probability reaches the threshold of its most
// likely class; lexical.Model.ThresholdOf). Out of fold, a dev sample is
// flagged when the other stages catch it (caught) or the model flags it.
// The thresholds may add false positives up to target of the benign
// samples, counting only those the other stages do not already flag, and
// among the thresholds that do, they are the ones with the highest recall
// summed over the classes (each class's share of its samples, so a small
// class weighs as much as a big one): for each class and each number of
// false positives it may add, the lowest threshold that adds no more, then
// the best split of the budget between the classes (a knapsack, exact).
// A class that gets nothing keeps 1: its windows never flag.
//
// floors (by class index; nil or 0 for none) bound that split from below:
// while a class's recall with the other stages (its samples flagged by
// them or by the model at any class's threshold) is under its floor, the
// class is given the false positives of its threshold's next step of
// recall before the rest of the budget is split again, as long as the
// budget holds what the floors take together (a class whose next step
// would not fit stays where it is). Without a floor a class whose recall the other
// stages mostly make loses its budget to one where the model adds more,
// and its held-out recall falls with it.
func chooseClassThresholds(ex []lexical.Example, owner []int, oof []lexical.Result, caught []bool, target float64, floors []float64) CVReport {
	k := len(LexicalClasses)
	var nBenign int
	perClass := make([]int, k)
	caughtOwn := make([]int, k) // scored samples of each class the other stages flag
	byClass := make([][]int, k) // uncaught scored samples by predicted class, highest first
	for i, e := range ex {
		if owner[i] != i {
			continue
		}
		if e.Class == 0 {
			nBenign++
		} else {
			perClass[e.Class]++
			caughtOwn[e.Class] += b2i(caught[i])
		}
		if c := oof[i].Class; !caught[i] && c > 0 && c < k {
			byClass[c] = append(byClass[c], i)
		}
	}
	for _, list := range byClass {
		slices.SortStableFunc(list, func(a, b int) int { return cmpDesc(oof[a].Attack, oof[b].Attack) })
	}
	budget := int(target * float64(nBenign))
	// gain[c][f] is the recall class c's threshold adds with at most f
	// false positives, taking the first take[c][f] of byClass[c].
	gain := make([][]float64, k)
	take := make([][]int, k)
	own := make([][]int, k) // class c's own samples in the first take[c][f]
	for c := 1; c < k; c++ {
		gain[c], take[c], own[c] = make([]float64, budget+1), make([]int, budget+1), make([]int, budget+1)
		list := byClass[c]
		g, fp, n := 0.0, 0, 0
		for j := 0; j < len(list) && fp <= budget; j++ {
			e := ex[list[j]]
			if e.Class == 0 {
				fp++
				continue
			}
			g += 1 / float64(perClass[e.Class])
			n += b2i(e.Class == c)
			// a threshold can stop only between two different scores
			if j+1 < len(list) && oof[list[j+1]].Attack == oof[list[j]].Attack {
				continue
			}
			if fp <= budget && g > gain[c][fp] {
				for f := fp; f <= budget; f++ {
					if g > gain[c][f] {
						gain[c][f], take[c][f], own[c][f] = g, j+1, n
					}
				}
			}
		}
	}
	// least[c]: the false positives class c gets before the budget is
	// split; raised, a step of its own recall at a time, for each class
	// whose floor the split leaves unmet, while the budget allows
	least := make([]int, k)
	rep := splitBudget(ex, owner, oof, caught, byClass, gain, take, least, budget)
	for {
		need := 0
		for c := 1; c < k; c++ {
			need += least[c]
		}
		raised := false
		for c := 1; c < k; c++ {
			if c < len(floors) && floors[c] > 0 && rep.CaughtPerClass[LexicalClasses[c]] < floors[c]-1e-9 {
				f := least[c]
				for f <= budget && own[c][f] == own[c][least[c]] {
					f++
				}
				if f <= budget && need-least[c]+f <= budget {
					need += f - least[c]
					least[c], raised = f, true
				}
			}
		}
		if !raised {
			return rep
		}
		rep = splitBudget(ex, owner, oof, caught, byClass, gain, take, least, budget)
	}
}

// splitBudget is chooseClassThresholds's split of the budget between the
// classes, class c getting at least least[c] false positives, and the
// report of the thresholds it gives.
func splitBudget(ex []lexical.Example, owner []int, oof []lexical.Result, caught []bool, byClass [][]int, gain [][]float64, take [][]int, least []int, budget int) CVReport {
	k := len(LexicalClasses)
	// best[c][b]: the most recall classes 1..c add with b false positives
	best := make([][]float64, k)
	spent := make([][]int, k) // class c's share of b in that best
	best[0] = make([]float64, budget+1)
	for c := 1; c < k; c++ {
		best[c], spent[c] = make([]float64, budget+1), make([]int, budget+1)
		for b := 0; b <= budget; b++ {
			best[c][b] = math.Inf(-1)
			for f := least[c]; f <= b; f++ {
				// ties go to the smaller share: fewer false positives
				if v := best[c-1][b-f] + gain[c][f]; v > best[c][b]+1e-12 {
					best[c][b], spent[c][b] = v, f
				}
			}
		}
	}
	taken := make([]int, k)
	for c, b := k-1, budget; c >= 1; c-- {
		f := spent[c][b]
		taken[c] = take[c][f]
		b -= f
	}
	rep := CVReport{ClassThresholds: make([]float64, k), PerClass: map[string]float64{}, CaughtPerClass: map[string]float64{}}
	rep.Threshold = 1
	for c := 1; c < k; c++ {
		t := 1.0
		if taken[c] > 0 {
			t = math.Floor(oof[byClass[c][taken[c]-1]].Attack*1e4) / 1e4
		}
		rep.ClassThresholds[c] = t
		rep.Threshold = min(rep.Threshold, t)
	}
	var neg, fpLex, fpAll, pos, tp int
	hits := make([][3]int, k) // samples, flagged by the model, flagged by either
	for i, e := range ex {
		if owner[i] != i {
			continue
		}
		rep.Samples++
		c := oof[i].Class
		hit := c > 0 && c < k && oof[i].Attack >= rep.ClassThresholds[c]
		if e.Class == 0 {
			neg++
			fpLex += b2i(hit)
			fpAll += b2i(hit || caught[i])
			continue
		}
		pos++
		tp += b2i(hit)
		hits[e.Class][0]++
		hits[e.Class][1] += b2i(hit)
		hits[e.Class][2] += b2i(hit || caught[i])
	}
	rep.FPR, rep.Recall, rep.CaughtFPR = ratio(fpLex, neg), ratio(tp, pos), ratio(fpAll, neg)
	for c := 1; c < k; c++ {
		if hits[c][0] > 0 {
			rep.PerClass[LexicalClasses[c]] = ratio(hits[c][1], hits[c][0])
			rep.CaughtPerClass[LexicalClasses[c]] = ratio(hits[c][2], hits[c][0])
		}
	}
	return rep
}

// cmpDesc orders numbers from the highest.
func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CaughtByOtherStages returns TrainConfig.Caught for a content
// directory (its patterns; its lexical model is not read, and need not
// exist): whether the evaluator flags a sample (Predict) when its AI scan
// cannot, i.e. whether the precheck, the validators and the entropy stage
// already do. The AI scan is given a model that reads every text as
// benign.
func CaughtByOtherStages(ctx context.Context, content fs.FS) (func(Sample) bool, error) {
	var mute strings.Builder
	fmt.Fprintf(&mute, "%s\nclasses\t%s\nthreshold\t0.5\nbias", lexical.Format, strings.Join(LexicalClasses, "\t"))
	for range LexicalClasses[1:] {
		mute.WriteString("\t-1000")
	}
	mute.WriteString("\n")
	data, err := eval.LoadFS(withModel{FS: content, model: []byte(mute.String())})
	if err != nil {
		return nil, fmt.Errorf("quality: %w", err)
	}
	ev, err := eval.New(eval.Options{Data: data})
	if err != nil {
		return nil, fmt.Errorf("quality: %w", err)
	}
	return func(s Sample) bool {
		r, err := ev.Evaluate(ctx, s.Text)
		return err == nil && Predict(r).Flagged
	}, nil
}

// withModel is a content directory whose lexical model file
// (eval.LexicalFile) is model.
type withModel struct {
	fs.FS
	model []byte
}

// ReadFile reads name from the content directory, or returns the model.
func (w withModel) ReadFile(name string) ([]byte, error) {
	if name == eval.LexicalFile {
		return w.model, nil
	}
	return fs.ReadFile(w.FS, name)
}
