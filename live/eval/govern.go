package eval

import (
	"context"
	"slices"
	"strings"
)

// Output profiles a pattern can feed (Pattern.Profile), which Govern
// reports about a response.
const (
	ProfileRefusal          = "refusal"            // the model declined
	ProfileSystemPromptLeak = "system_prompt_leak" // the model disclosed its instructions
	ProfileExfiltrationLink = "exfiltration_link"  // a link or image that carries data out
)

// profiles are the values Pattern.Profile may take.
var profiles = []string{"", ProfileRefusal, ProfileSystemPromptLeak, ProfileExfiltrationLink}

// GovernReport analyses a prompt and the response a model gave to it.
type GovernReport struct {
	Input     Report        `json:"input"`  // the prompt, read with the input-scope patterns
	Output    Report        `json:"output"` // the response, read with the output-scope patterns
	Profile   OutputProfile `json:"output_profile"`
	Decision  Decision      `json:"decision"` // the stricter of the two
	Compliant bool          `json:"compliant"`
	// SuggestedRewritePrompt is the prompt with what was flagged dropped
	// or redacted and its intent kept, for the caller to send instead; it
	// is empty when nothing of the prompt could be kept, and equal to the
	// prompt when nothing in it was flagged.
	SuggestedRewritePrompt string        `json:"suggested_rewrite_prompt"`
	Rewrite                []RewriteStep `json:"rewrite"` // what the rewrite changed, in prompt order
	RewriteNote            string        `json:"rewrite_note"`
}

// OutputProfile summarises what the response did.
type OutputProfile struct {
	LeakedSecrets      []string `json:"leaked_secrets"`       // flag ids
	LeakedPersonalData []string `json:"leaked_personal_data"` // flag ids
	SystemPromptLeak   bool     `json:"system_prompt_leak"`
	ExfiltrationLinks  bool     `json:"exfiltration_links"`
	Refusal            bool     `json:"refusal"`
}

// Rewrite actions.
const (
	ActionDropped  = "dropped"  // a sentence was left out
	ActionRedacted = "redacted" // a secret or personal datum was replaced by a placeholder
)

// RewriteStep is one change the rewrite made, located in the prompt as
// sent (byte offsets), without quoting it.
type RewriteStep struct {
	Action     string     `json:"action"`
	Offset     int        `json:"offset"`
	Length     int        `json:"length"`
	Categories []Category `json:"categories"`
	FlagIDs    []string   `json:"flag_ids"`
}

// Govern evaluates a prompt (input profile) and a model's response to it
// (output profile: leaked secrets or personal data, system-prompt leakage,
// exfiltration links, refusals), suggests a rewrite of the prompt, and
// records one Record of kind govern. Bad input returns an *InputError
// naming the field; nothing is recorded then.
func (e *Evaluator) Govern(ctx context.Context, prompt, response string) (GovernReport, error) {
	g, err := e.govern(ctx, prompt, response)
	if err != nil {
		return GovernReport{}, err
	}
	return g, e.keep(ctx, &g.Output, e.governRecord(g))
}

// govern is Govern without its record.
func (e *Evaluator) govern(ctx context.Context, prompt, response string) (GovernReport, error) {
	if err := e.intake("prompt", prompt); err != nil {
		return GovernReport{}, err
	}
	if err := e.intake("response", response); err != nil {
		return GovernReport{}, err
	}
	in, err := e.run(ctx, "prompt", prompt, ScopeInput)
	if err != nil {
		return GovernReport{}, err
	}
	out, err := e.run(ctx, "response", response, ScopeOutput)
	if err != nil {
		return GovernReport{}, err
	}
	g := GovernReport{Input: in, Output: out, Decision: in.Decision.stricter(out.Decision)}
	g.Compliant = g.Decision == Allow
	g.Profile = e.profile(out)
	if g.SuggestedRewritePrompt, g.Rewrite, g.RewriteNote, err = e.rewrite(ctx, prompt, in); err != nil {
		return GovernReport{}, err
	}
	return g, nil
}

// governRecord is the one Record of a governance report: both sides'
// categories and flags, the stricter decision.
func (e *Evaluator) governRecord(g GovernReport) Record {
	in, out := g.Input, g.Output
	rec := e.record(KindGovern, in)
	rec.OutputSHA256 = out.Input.SHA256
	rec.Decision, rec.Score = g.Decision, max(in.Score, out.Score)
	outRec := e.record(KindGovern, out)
	for _, c := range outRec.Categories {
		if !slices.Contains(rec.Categories, c) {
			rec.Categories = append(rec.Categories, c)
		}
	}
	slices.SortFunc(rec.Categories, func(a, b Category) int { return a.index() - b.index() })
	rec.FlagIDs = append(rec.FlagIDs, outRec.FlagIDs...)
	rec.StageErrors = append(rec.StageErrors, outRec.StageErrors...)
	if out.Entropy.Status != EngineOK {
		rec.Entropy = out.Entropy.Status
	}
	return rec
}

// profile reads the output profile off the response's flags.
func (e *Evaluator) profile(out Report) OutputProfile {
	p := OutputProfile{LeakedSecrets: []string{}, LeakedPersonalData: []string{}}
	for _, f := range out.Flags {
		switch f.Category {
		case Secrets:
			p.LeakedSecrets = append(p.LeakedSecrets, f.ID)
		case PersonalData:
			p.LeakedPersonalData = append(p.LeakedPersonalData, f.ID)
		}
		switch e.profileOf(f.ID) {
		case ProfileRefusal:
			p.Refusal = true
		case ProfileSystemPromptLeak:
			p.SystemPromptLeak = true
		case ProfileExfiltrationLink:
			p.ExfiltrationLinks = true
		}
	}
	return p
}

// profileOf returns the output profile a pattern feeds, if any.
func (e *Evaluator) profileOf(id string) string {
	for i := range e.pre.patterns {
		if e.pre.patterns[i].ID == id {
			return e.pre.patterns[i].Profile
		}
	}
	return ""
}

// rewrite drops the prompt's flagged sentences and redacts the secrets and
// personal data found in the text as sent, keeping the rest (normalised,
// so invisible characters and lookalikes go too). It checks its own
// result: if the rewrite is still flagged, it suggests nothing.
func (e *Evaluator) rewrite(ctx context.Context, prompt string, in Report) (string, []RewriteStep, string, error) {
	steps := []RewriteStep{}
	if in.Decision == Allow && !hasWeight(in.Flags) {
		return prompt, steps, "Nothing in the prompt was flagged; it is suggested as it is.", nil
	}
	var kept []string
	for _, sp := range sentences(prompt) {
		seg := prompt[sp[0]:sp[1]]
		if blank(seg) {
			continue
		}
		r, err := e.run(ctx, "prompt", seg, ScopeInput)
		if err != nil {
			return "", nil, "", err
		}
		drop, redact := judgeSegment(r.Flags)
		switch {
		case len(drop) > 0:
			steps = append(steps, step(ActionDropped, sp[0], sp[1]-sp[0], drop))
			continue
		case len(redact) > 0:
			seg, steps = redactSpans(seg, sp[0], redact, steps)
			for range 8 { // a pattern reports its first match; look again for more
				r, err := e.run(ctx, "prompt", seg, ScopeInput)
				if err != nil {
					return "", nil, "", err
				}
				if _, more := judgeSegment(r.Flags); len(more) == 0 {
					break
				} else {
					seg, steps = redactSpans(seg, sp[0], more, steps)
				}
			}
		}
		kept = append(kept, e.clean(seg))
	}
	out := strings.Join(strings.Fields(strings.Join(kept, " ")), " ")
	if out == "" {
		return "", steps, "Every sentence of the prompt was flagged, so none of it could be kept; restate the request without the flagged parts.", nil
	}
	check, err := e.run(ctx, "prompt", out, ScopeInput)
	if err != nil {
		return "", nil, "", err
	}
	if hasWeight(check.Flags) {
		return "", steps, "The flagged parts could not be separated from the rest of the prompt; restate the request without them.", nil
	}
	return out, steps, "The flagged sentences were dropped and secrets or personal data redacted; the rest of the prompt is kept as written.", nil
}

// hasWeight reports whether any flag adds to the score.
func hasWeight(flags []Flag) bool {
	return slices.ContainsFunc(flags, func(f Flag) bool { return f.Severity.Weight() > 0 })
}

// judgeSegment sorts a sentence's weighted flags into those that drop it
// (an instruction, a claim or a request that is the problem) and those
// whose match can be redacted in place (secrets and personal data found
// in the text as sent). Obfuscation flags do neither: the kept text is
// normalised, and whatever the trick hid raises its own flag.
func judgeSegment(flags []Flag) (drop, redact []Flag) {
	for _, f := range flags {
		switch {
		case f.Severity.Weight() == 0, f.Category == Obfuscation: // cleaning removes the trick; what it hid is flagged on its own
		case (f.Category == Secrets || f.Category == PersonalData) && f.Evidence != nil && f.Evidence.View == ViewText:
			redact = append(redact, f)
		default:
			drop = append(drop, f)
		}
	}
	return drop, redact
}

// redactSpans replaces each flag's match in seg (which starts at base in
// the prompt) with a placeholder naming its category, last match first so
// the offsets hold.
func redactSpans(seg string, base int, flags []Flag, steps []RewriteStep) (string, []RewriteStep) {
	slices.SortFunc(flags, func(a, b Flag) int { return b.Evidence.Offset - a.Evidence.Offset })
	var added []RewriteStep
	end := len(seg) + 1
	for _, f := range flags {
		lo, hi := f.Evidence.Offset, f.Evidence.Offset+f.Evidence.Length
		if hi > end { // overlaps a span already redacted
			continue
		}
		seg = seg[:lo] + "[" + strings.ToUpper(string(f.Category)) + " REDACTED]" + seg[hi:]
		added = append(added, step(ActionRedacted, base+lo, hi-lo, []Flag{f}))
		end = lo
	}
	slices.Reverse(added)
	return seg, append(steps, added...)
}

func step(action string, offset, length int, flags []Flag) RewriteStep {
	s := RewriteStep{Action: action, Offset: offset, Length: length, Categories: []Category{}, FlagIDs: []string{}}
	for _, f := range flags {
		s.FlagIDs = append(s.FlagIDs, f.ID)
		if !slices.Contains(s.Categories, f.Category) {
			s.Categories = append(s.Categories, f.Category)
		}
	}
	return s
}

// clean returns seg normalised: invisible and control characters gone,
// compatibility forms and lookalikes folded.
func (e *Evaluator) clean(seg string) string {
	var rep NormaliseReport
	n := normaliser{lim: e.opts.Limits, rep: &rep}
	out, _ := n.normalise(seg)
	return out
}

// sentences splits text after each . ! ? and line break, returning byte
// ranges that cover it.
func sentences(text string) [][2]int {
	var out [][2]int
	lo := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '.', '!', '?':
			if i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' && text[i+1] != '\t' {
				continue // 3.14, example.com, "?x=1"
			}
		case '\n':
		default:
			continue
		}
		out = append(out, [2]int{lo, i + 1})
		lo = i + 1
	}
	if lo < len(text) {
		out = append(out, [2]int{lo, len(text)})
	}
	return out
}
