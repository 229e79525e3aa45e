package quality

import "github.com/proofsite/proofsite/live/eval"

// Predict reads a prediction off a report: flagged unless the decision is
// allow; the primary category is that of the heaviest flag, preferring a
// category other than obfuscation (which says how, not what).
func Predict(r eval.Report) Prediction {
	if r.Decision == eval.Allow {
		return Prediction{}
	}
	best, bestW := "", -1
	for _, f := range r.Flags {
		w := f.Severity.Weight() * 2
		if f.Category != eval.Obfuscation {
			w++ // breaks ties, and beats obfuscation of the same weight
		} else {
			w -= 20
		}
		if w > bestW {
			best, bestW = string(f.Category), w
		}
	}
	return Prediction{Flagged: true, Category: best}
}
