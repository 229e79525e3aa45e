package eval

import "time"

// Stage names, in the order Evaluate runs them.
const (
	StageIntake    = "intake"
	StageNormalise = "normalise"
	StagePrecheck  = "precheck"
	StageEntropy   = "entropy"
	StageAIScan    = "ai_scan"
	StagePolicy    = "policy"
	StageExplain   = "explain"
)

// StageNames lists the seven stages in order (spec 8: 7 pipeline stages).
var StageNames = [...]string{StageIntake, StageNormalise, StagePrecheck, StageEntropy, StageAIScan, StagePolicy, StageExplain}

// Stage statuses.
const (
	StatusOK    = "ok"
	StatusError = "error" // the stage failed; Stage.Error says why
)

// Report is the evaluation of one text: what the route serialises.
type Report struct {
	Input       InputInfo  `json:"input"`
	Decision    Decision   `json:"decision"`
	Score       int        `json:"score"`
	Compliant   bool       `json:"compliant"` // decision is allow
	Categories  []Category `json:"categories"`
	Flags       []Flag     `json:"flags"`
	Explanation string     `json:"explanation"`
	// Stages holds the seven stages in order, each timed.
	Stages      []Stage         `json:"stages"`
	Normalise   NormaliseReport `json:"normalise"`
	Entropy     EntropyReport   `json:"entropy"`
	AIScan      AIScanReport    `json:"ai_scan"`
	Patterns    PatternSetInfo  `json:"patterns"`
	EvaluatedAt time.Time       `json:"evaluated_at"`
}

// InputInfo identifies the input without holding it.
type InputInfo struct {
	SHA256 string `json:"sha256"` // hex SHA-256 of the text's bytes
	Bytes  int    `json:"bytes"`
	Chars  int    `json:"chars"` // Unicode code points
}

// Stage is one stage's outcome and duration.
type Stage struct {
	Name       string `json:"name"`
	Status     string `json:"status"` // StatusOK or StatusError
	DurationUS int64  `json:"duration_us"`
	Error      string `json:"error,omitempty"`
}

// Flag sources.
const (
	SourcePrecheck = "precheck"
	SourceAIScan   = "ai_scan"
)

// Flag is one finding, explained. It never quotes the text: Evidence
// locates the match by view and byte offset.
type Flag struct {
	ID           string    `json:"id"` // a pattern id, or AI-<CATEGORY> / JUDGE-<CATEGORY>
	Title        string    `json:"title"`
	Category     Category  `json:"category"`
	Severity     Severity  `json:"severity"`
	Source       string    `json:"source"` // SourcePrecheck or SourceAIScan
	Article      int       `json:"article"`
	ArticleTitle string    `json:"article_title,omitempty"`
	Explanation  string    `json:"explanation"`
	Remediation  string    `json:"remediation"`
	Evidence     *Evidence `json:"evidence,omitempty"`
}

// Evidence locates a match without quoting it.
type Evidence struct {
	View   ViewKind `json:"view"`
	Depth  int      `json:"depth"`  // decoding layers below the input
	Offset int      `json:"offset"` // byte offset in the view
	Length int      `json:"length"` // bytes
	// Probability is, for an AI-scan flag, the lexical model's probability
	// that the window [Offset, Offset+Length) of the view is an attack.
	Probability float64 `json:"probability,omitempty"`
}

// EngineLexical names the offline AI-scan engine in reports: the lexical
// model (package lexical).
const EngineLexical = "lexical-logistic/v1"

// AIScanReport is the AI-scan stage's findings.
type AIScanReport struct {
	Engine string `json:"engine"` // EngineLexical
	// Scores holds, per category the lexical model knows, the highest
	// probability any window of the text gave it.
	Scores map[Category]float64 `json:"scores"`
	Judge  *JudgeReport         `json:"judge,omitempty"` // set when a Judge is configured
}

// JudgeReport is what the configured judge answered.
type JudgeReport struct {
	Status     string     `json:"status"` // StatusOK or StatusError
	Verdict    string     `json:"verdict,omitempty"`
	Categories []Category `json:"categories,omitempty"`
	Confidence float64    `json:"confidence,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	Error      string     `json:"error,omitempty"`
}

// PatternSetInfo identifies the pattern data an evaluation used.
type PatternSetInfo struct {
	Version string `json:"version"`
	Count   int    `json:"count"`
	Digest  string `json:"sha256"` // of the data files (Data.Digest)
}
