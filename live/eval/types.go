package eval

import "slices"

// Category names a kind of risk a flag belongs to.
type Category string

// The categories, in the order reports list them.
const (
	PromptInjection  Category = "prompt_injection"
	Jailbreak        Category = "jailbreak"
	Obfuscation      Category = "obfuscation"
	Secrets          Category = "secrets"
	PersonalData     Category = "personal_data"
	HarmfulContent   Category = "harmful_content"
	Exfiltration     Category = "exfiltration"
	UnsafeOutput     Category = "unsafe_output"
	GovernanceClaims Category = "governance_claims"
)

// Categories lists every category in report order.
var Categories = [...]Category{PromptInjection, Jailbreak, Obfuscation, Secrets, PersonalData,
	HarmfulContent, Exfiltration, UnsafeOutput, GovernanceClaims}

// Valid reports whether c is one of Categories.
func (c Category) Valid() bool { return slices.Contains(Categories[:], c) }

// index is c's position in Categories, or -1.
func (c Category) index() int { return slices.Index(Categories[:], c) }

// Severity says how much a flag weighs in the policy score.
type Severity string

// The severities, lightest first.
const (
	Info     Severity = "info"
	Low      Severity = "low"
	Medium   Severity = "medium"
	High     Severity = "high"
	Critical Severity = "critical"
)

// severityWeights are the score each severity adds (see Policy).
var severityWeights = map[Severity]int{Info: 0, Low: 1, Medium: 3, High: 6, Critical: 10}

// Weight returns the score a flag of this severity adds; -1 for an unknown
// severity.
func (s Severity) Weight() int {
	if w, ok := severityWeights[s]; ok {
		return w
	}
	return -1
}

// Scope says which side of a conversation a pattern reads.
type Scope string

// The scopes. A pattern's zero scope is ScopeBoth.
const (
	ScopeInput  Scope = "input"  // prompts: texts sent to a model
	ScopeOutput Scope = "output" // responses: texts a model produced
	ScopeBoth   Scope = "both"
)

// covers reports whether a pattern of scope s runs on a text of side side.
func (s Scope) covers(side Scope) bool { return s == ScopeBoth || s == "" || s == side }

// Decision is the policy's verdict on a text.
type Decision string

// The decisions, mildest first.
const (
	Allow  Decision = "allow"  // nothing that needs a person's attention
	Review Decision = "review" // a person should look before acting on it
	Block  Decision = "block"  // do not act on it
)

// Decisions lists every decision, mildest first.
var Decisions = [...]Decision{Allow, Review, Block}

// rank orders decisions so the stricter of two can be taken.
func (d Decision) rank() int { return slices.Index(Decisions[:], d) }

// stricter returns the stricter of d and o.
func (d Decision) stricter(o Decision) Decision {
	if o.rank() > d.rank() {
		return o
	}
	return d
}
