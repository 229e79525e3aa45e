package eval

import (
	"fmt"
	"slices"

	"github.com/proofsite/proofsite/live/eval/lexical"
)

// Policy turns flags into a score and a decision.
//
// The score is the sum of the flags' severity weights (info 0, low 1,
// medium 3, high 6, critical 10), plus StructureWeight for each anomaly
// the entropy stage found, capped at 100. The decision is block at BlockAt
// or more, review at ReviewAt or more, allow below. A stage that failed
// (a judge that did not answer properly) makes the decision at least
// review: a text the pipeline could not fully read is never allowed as if
// it had been.
//
// With the defaults, one critical flag blocks; one high or medium flag
// asks for review; one low flag (an e-mail address) is reported but
// allowed, and two low flags ask for review.
type Policy struct {
	ReviewAt        int // default 2
	BlockAt         int // default 10
	StructureWeight int // per entropy anomaly; default 1
	// AIScanThreshold is the lexical model's attack probability that
	// raises an AI-scan flag, whatever the class; default the thresholds
	// the model was trained with (chosen by cross-validation on the dev
	// split; one per class when the model has them: lexical.Model.ThresholdOf).
	AIScanThreshold float64
	AIScanHigh      float64 // probability that makes that flag high, not medium; default 0.98

	model *lexical.Model // whose thresholds apply when AIScanThreshold is not set
}

// MaxScore caps the score.
const MaxScore = 100

func (p *Policy) fill(m *lexical.Model) error {
	if p.ReviewAt == 0 {
		p.ReviewAt = 2
	}
	if p.BlockAt == 0 {
		p.BlockAt = 10
	}
	if p.StructureWeight == 0 {
		p.StructureWeight = 1
	}
	highest := p.AIScanThreshold
	if highest == 0 {
		p.model = m
		highest = m.Threshold
		for c := 1; c < len(m.Classes); c++ {
			highest = max(highest, m.ThresholdOf(c))
		}
	}
	if p.AIScanHigh == 0 {
		p.AIScanHigh = max(0.98, highest)
	}
	if p.ReviewAt < 1 || p.BlockAt <= p.ReviewAt || highest > p.AIScanHigh || highest > 1 {
		return fmt.Errorf("%w: policy: need 1 <= ReviewAt < BlockAt and AIScanThreshold <= AIScanHigh <= 1", ErrData)
	}
	return nil
}

// aiScanThreshold returns the attack probability at which the lexical
// model's best window, whose most likely attack class is class, raises an
// AI-scan flag.
func (p *Policy) aiScanThreshold(class int) float64 {
	if p.model != nil {
		return p.model.ThresholdOf(class)
	}
	return p.AIScanThreshold
}

// decide scores the report's flags and sets its decision and categories.
func (p *Policy) decide(r *Report) {
	score := p.StructureWeight * len(r.Entropy.Anomalies)
	r.Categories = []Category{}
	for _, f := range r.Flags {
		w := f.Severity.Weight()
		score += w
		if w > 0 && !slices.Contains(r.Categories, f.Category) {
			r.Categories = append(r.Categories, f.Category)
		}
	}
	slices.SortFunc(r.Categories, func(a, b Category) int { return a.index() - b.index() })
	r.Score = min(score, MaxScore)
	switch {
	case r.Score >= p.BlockAt:
		r.Decision = Block
	case r.Score >= p.ReviewAt:
		r.Decision = Review
	default:
		r.Decision = Allow
	}
	for _, st := range r.Stages {
		if st.Status == StatusError {
			r.Decision = r.Decision.stricter(Review)
		}
	}
	if r.AIScan.Judge != nil && r.AIScan.Judge.Status == StatusError {
		r.Decision = r.Decision.stricter(Review)
	}
	r.Compliant = r.Decision == Allow
}
