package quality

import "strings"

// substrings is the simple heuristic the evaluator is compared with:
// phrases a keyword filter would hold, each naming the category it
// suggests. Case-insensitive, contains-any, first match wins.
var substrings = []struct{ phrase, category string }{
	{"ignore previous instructions", "prompt_injection"},
	{"ignore all previous", "prompt_injection"},
	{"ignore the above", "prompt_injection"},
	{"disregard previous", "prompt_injection"},
	{"disregard the above", "prompt_injection"},
	{"forget your instructions", "prompt_injection"},
	{"new instructions", "prompt_injection"},
	{"system prompt", "exfiltration"},
	{"reveal your", "exfiltration"},
	{"password", "exfiltration"},
	{"jailbreak", "jailbreak"},
	{"do anything now", "jailbreak"},
	{"developer mode", "jailbreak"},
	{"no restrictions", "jailbreak"},
	{"without restrictions", "jailbreak"},
	{"unfiltered", "jailbreak"},
	{"uncensored", "jailbreak"},
	{"bomb", "harmful_content"},
	{"explosive", "harmful_content"},
	{"poison", "harmful_content"},
	{"malware", "harmful_content"},
	{"hack into", "harmful_content"},
	{"private key", "secrets"},
	{"api_key", "secrets"},
	{"secret", "secrets"},
	{"credit card", "personal_data"},
	{"social security", "personal_data"},
	{"the bridge", "governance_claims"},
	{"constitution", "governance_claims"},
}

// Substring is the heuristic's prediction for text.
func Substring(text string) Prediction {
	l := strings.ToLower(text)
	for _, s := range substrings {
		if strings.Contains(l, s.phrase) {
			return Prediction{Flagged: true, Category: s.category}
		}
	}
	return Prediction{}
}
