package eval

import (
	"fmt"
	"strconv"
	"strings"
)

// categoryWords says a category in words, for titles and sentences.
func categoryWords(c Category) string {
	switch c {
	case PromptInjection:
		return "prompt injection"
	case Jailbreak:
		return "jailbreak"
	case Obfuscation:
		return "obfuscation"
	case Secrets:
		return "secrets"
	case PersonalData:
		return "personal data"
	case HarmfulContent:
		return "harmful content"
	case Exfiltration:
		return "exfiltration"
	case UnsafeOutput:
		return "unsafe output"
	case GovernanceClaims:
		return "governance claims"
	}
	return string(c)
}

// whereFound says, for a person, in which view a match was found.
func whereFound(ev *Evidence) string {
	if ev == nil {
		return "It was found while normalising the text."
	}
	switch ev.View {
	case ViewText:
		return "It was found in the text as sent."
	case ViewNormalised:
		return "It was found only after normalisation (Unicode compatibility forms, invisible characters, lookalike letters)."
	case ViewLeet:
		return "It was found only after reading leetspeak digits and symbols as letters."
	case ViewSpaced:
		return "It was found only after joining letters written one at a time."
	case ViewTags:
		return "It was found in text hidden in invisible Unicode tag characters."
	case ViewROT13:
		return "It was found after undoing ROT13."
	}
	return fmt.Sprintf("It was found after decoding a %s layer (%d deep).", ev.View, ev.Depth)
}

// explain completes every flag's explanation with where it was found and
// the article it offends, and writes the summary.
func (e *Evaluator) explain(r *Report) {
	var b strings.Builder
	for i := range r.Flags {
		f := &r.Flags[i]
		f.ArticleTitle = e.opts.Articles[f.Article]
		b.Reset()
		b.WriteString(strings.TrimSpace(f.Explanation))
		if f.Source == SourcePrecheck {
			b.WriteString(" ")
			b.WriteString(whereFound(f.Evidence))
		} else if ev := f.Evidence; ev != nil {
			b.WriteString(" The lexical model gives a passage of ")
			b.WriteString(strconv.Itoa(ev.Length))
			b.WriteString(" bytes (")
			b.WriteString(string(ev.View))
			b.WriteString(" view, at byte ")
			b.WriteString(strconv.Itoa(ev.Offset))
			b.WriteString(") a probability of ")
			b.WriteString(strconv.FormatFloat(ev.Probability, 'f', 2, 64))
			b.WriteString(" of being one.")
		}
		b.WriteString(" See constitution Article ")
		b.WriteString(strconv.Itoa(f.Article))
		if f.ArticleTitle != "" {
			b.WriteString(" (" + f.ArticleTitle + ")")
		}
		b.WriteString(".")
		f.Explanation = b.String()
	}
	r.Explanation = summarise(r, &e.opts.Policy)
}

// summarise writes the report's one-paragraph explanation.
func summarise(r *Report, p *Policy) string {
	var b strings.Builder
	switch r.Decision {
	case Allow:
		b.WriteString("Allowed")
	case Review:
		b.WriteString("Needs review")
	case Block:
		b.WriteString("Blocked")
	}
	fmt.Fprintf(&b, " (score %d; review at %d, block at %d).", r.Score, p.ReviewAt, p.BlockAt)
	if len(r.Flags) == 0 {
		b.WriteString(" No pattern matched and the text does not resemble the known attacks.")
	}
	for _, f := range r.Flags {
		for _, part := range [...]string{" ", f.ID, " ", f.Title, " (", categoryWords(f.Category), ", ", string(f.Severity), ")."} {
			b.WriteString(part)
		}
	}
	if n := len(r.Entropy.Anomalies); n > 0 {
		fmt.Fprintf(&b, " Structure: %s.", strings.ReplaceAll(strings.Join(r.Entropy.Anomalies, ", "), "_", " "))
	}
	for _, st := range r.Stages {
		if st.Status == StatusError {
			fmt.Fprintf(&b, " The %s stage failed, so the text was not fully checked: %s.", st.Name, st.Error)
		}
	}
	return b.String()
}
