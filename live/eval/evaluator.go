package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/proofsite/proofsite/live/eval/lexical"
)

// Options configure an Evaluator. Only Data is required; every other
// field has a documented default for its zero value.
type Options struct {
	// Data is the pattern set and the lexical model (LoadFS). It must hold
	// exactly PatternCount patterns.
	Data Data
	// Articles maps constitution article numbers to their titles. When
	// set, every article the data names must be in it, and flags carry the
	// title. When nil, flags carry the number only.
	Articles map[int]string
	// Judge, when set, is asked about every text after the lexical model.
	Judge Judge
	// JudgeTimeout bounds one judge call; 0 means 5 s.
	JudgeTimeout time.Duration
	// Recorder keeps one Record per evaluation; nil keeps none.
	Recorder Recorder
	// Now is the clock for stage timings and record times; nil means time.Now.
	Now func() time.Time
	// Limits bound the work on one text; zero fields take their defaults.
	Limits Limits
	// Policy sets the decision thresholds; zero fields take their defaults.
	Policy Policy
	// Logger receives judge and recorder failures; nil discards.
	Logger *slog.Logger
}

// Limits bound the work on one text.
type Limits struct {
	MaxBytes        int // longest text accepted, in bytes; default 32 KiB
	MaxDecodeDepth  int // decoding layers under the input; default 2
	MaxViews        int // views scanned, the input included; default 12
	MaxDecodedBytes int // bytes decoded over all layers; default 64 KiB
	MaxAnalyseBytes int // bytes the entropy stage reads; default MaxBytes
}

// DefaultMaxBytes is the default size limit of a text.
const DefaultMaxBytes = 32 << 10

func (l *Limits) fill() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxBytes, DefaultMaxBytes)
	def(&l.MaxDecodeDepth, 2)
	def(&l.MaxViews, 12)
	def(&l.MaxDecodedBytes, 64<<10)
	def(&l.MaxAnalyseBytes, l.MaxBytes)
}

// Evaluator runs the pipeline. It is safe for concurrent use.
type Evaluator struct {
	opts     Options
	pre      *precheck
	patterns PatternSetInfo
	counters counters
	log      *slog.Logger
}

// New checks and compiles the data and returns an Evaluator.
func New(opts Options) (*Evaluator, error) {
	if errs := opts.Data.check(); len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	pre, err := compilePatterns(opts.Data.Patterns)
	if err != nil {
		return nil, err
	}
	if opts.Articles != nil {
		var errs []error
		for _, p := range opts.Data.Patterns {
			if _, ok := opts.Articles[p.Article]; !ok {
				errs = append(errs, &DataError{File: PatternsFile, Pattern: p.ID, Msg: fmt.Sprintf("article %d is not in the constitution", p.Article)})
			}
		}
		for _, c := range Categories {
			if a := opts.Data.Categories[c].Article; opts.Articles[a] == "" {
				errs = append(errs, &DataError{File: PatternsFile, Msg: fmt.Sprintf("category %s: article %d is not in the constitution", c, a)})
			}
		}
		if len(errs) > 0 {
			return nil, joinErrors(errs)
		}
	}
	if opts.JudgeTimeout <= 0 {
		opts.JudgeTimeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Limits.fill()
	if err := opts.Policy.fill(opts.Data.Lexical); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Evaluator{
		opts: opts, pre: pre, log: log,
		patterns: PatternSetInfo{Version: opts.Data.Version, Count: len(opts.Data.Patterns), Digest: opts.Data.Digest},
	}, nil
}

// Patterns returns the identity of the pattern data in use.
func (e *Evaluator) Patterns() PatternSetInfo { return e.patterns }

// Evaluate runs the seven stages on text and records the outcome. Bad
// input returns an *InputError (matching ErrInput) and records nothing. If
// the Recorder fails, the complete report is returned with an error
// matching ErrRecord.
func (e *Evaluator) Evaluate(ctx context.Context, text string) (Report, error) {
	r, err := e.run(ctx, "text", text, ScopeInput)
	if err != nil {
		return Report{}, err
	}
	rec := e.record(KindEvaluate, r)
	return r, e.keep(ctx, &r, rec)
}

// scanPool reuses the precheck's working state.
var scanPool = sync.Pool{New: func() any { return new(scan) }}

// run is the pipeline without its record: the stages in order, on one
// side of a conversation.
func (e *Evaluator) run(ctx context.Context, field, text string, side Scope) (Report, error) {
	start := e.opts.Now()
	last := start
	r := Report{Stages: make([]Stage, 0, len(StageNames)), Flags: []Flag{}, Patterns: e.patterns, EvaluatedAt: start.UTC()}
	done := func(name string, err error) {
		now := e.opts.Now()
		st := Stage{Name: name, Status: StatusOK, DurationUS: now.Sub(last).Microseconds()}
		if err != nil {
			st.Status, st.Error = StatusError, err.Error()
		}
		r.Stages = append(r.Stages, st)
		last = now
	}

	// 1. intake
	if err := e.intake(field, text); err != nil {
		return Report{}, err
	}
	sum := sha256.Sum256([]byte(text))
	ascii := asciiPrefix(text) // counted eight bytes at a time
	r.Input = InputInfo{SHA256: hex.EncodeToString(sum[:]), Bytes: len(text), Chars: ascii + utf8.RuneCountInString(text[ascii:])}
	done(StageIntake, nil)

	// 2. normalise
	s := scanPool.Get().(*scan)
	defer func() {
		s.reset()
		scanPool.Put(s)
	}()
	n := normaliser{lim: e.opts.Limits, rep: &s.norm, views: s.views[:0]}
	s.views = n.build(text)
	base := s.views[0]
	if len(s.views) > 1 && s.views[1].kind == ViewNormalised {
		base = s.views[1]
	}
	done(StageNormalise, nil)

	// 3. precheck
	e.pre.run(s, side)
	r.Normalise = s.norm
	for i := range e.pre.patterns {
		if h := s.hits[i]; h.found {
			r.Flags = append(r.Flags, e.patternFlag(&e.pre.patterns[i], h))
		}
	}
	done(StagePrecheck, nil)

	// 4. entropy
	r.Entropy = analyse(base.text, s.norm.HomoglyphWords, e.opts.Limits.MaxAnalyseBytes)
	done(StageEntropy, nil)

	// 5. ai_scan
	aiErr := e.aiScan(ctx, &r, s.views, base.text)
	if err := ctx.Err(); err != nil {
		return Report{}, fmt.Errorf("eval: %s: %w", StageAIScan, err)
	}
	done(StageAIScan, aiErr)

	// 6. policy
	e.opts.Policy.decide(&r)
	done(StagePolicy, nil)

	// 7. explain (the record is kept by the caller, which knows the kind)
	e.explain(&r)
	done(StageExplain, nil)
	return r, nil
}

// intake checks the size, the encoding and that there is something to read.
func (e *Evaluator) intake(field, text string) error {
	switch {
	case len(text) > e.opts.Limits.MaxBytes:
		return &InputError{Field: field, Reason: ErrTooLarge,
			Detail: fmt.Sprintf("is %d bytes; the limit is %d", len(text), e.opts.Limits.MaxBytes)}
	case !utf8.ValidString(text):
		return &InputError{Field: field, Reason: ErrInvalidUTF8, Detail: "is not valid UTF-8"}
	case blank(text):
		return &InputError{Field: field, Reason: ErrEmpty, Detail: "is empty"}
	}
	return nil
}

// blank reports whether s has nothing but white space.
func blank(s string) bool {
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '\v', '\f', 0x85, 0xA0, 0x200B, 0xFEFF, 0x3000:
		default:
			return false
		}
	}
	return true
}

// patternFlag makes the flag of a pattern's hit.
func (e *Evaluator) patternFlag(c *compiled, h hit) Flag {
	f := Flag{ID: c.ID, Title: c.Title, Category: c.Category, Severity: c.Severity, Source: SourcePrecheck,
		Article: c.Article, Explanation: c.Explanation, Remediation: c.Remediation}
	if c.branches != nil {
		f.Evidence = &Evidence{View: h.view, Depth: h.depth, Offset: h.offset, Length: h.length}
	}
	return f
}

// LexicalText returns what the lexical model reads of a text as a whole:
// its base view (NFKC, invisible characters removed, lookalike letters
// folded to Latin: the normalised view, or the text itself when that
// changes nothing) with its letters lowered in every script, the view's
// lowered twin. The evaluator hands the model the lowered twin of every
// view it reads (aiScan), and cmd/evaltrain trains the model on
// LexicalText of every example (package quality), so the features the
// model learns are the ones the evaluator finds: "Как сделать бомбу" is
// learned as it is read, folded to "kak cдeлatь бoмбy".
func LexicalText(text string) string {
	n := normaliser{rep: &NormaliseReport{}}
	base, _ := n.normalise(text)
	return newView(ViewNormalised, 0, base).lower
}

// memoPool reuses the lexical model's memos (see aiScan).
var memoPool = sync.Pool{New: func() any { return new(lexical.Memo) }}

// aiScan runs the lexical model over the views and, when configured,
// the judge; only the judge can fail. The model reads each view's
// lowered twin (as LexicalText, what it was trained on): the base view
// whole, each decoded layer whole, and of the leetspeak and spacing views
// only what they changed; the window most like an attack, over all of
// them, decides. When it reads more than one text, a memo keeps the
// segments read, which the views share (about a third of the bytes read
// over the dev split's texts): the results are the same.
func (e *Evaluator) aiScan(ctx context.Context, r *Report, views []view, base string) error {
	m := e.opts.Data.Lexical
	var best lexical.Result
	var bestView ViewKind
	var offset int
	// the texts the model reads: a view's lowered twin, or its regions
	type read struct {
		v    *view
		text string
		at   int
	}
	var room [8]read
	reads := room[:0]
	for i := range views {
		v := &views[i]
		switch {
		case v.kind == ViewText && len(views) > 1 && views[1].kind == ViewNormalised:
			// the normalised view reads the same text better
		case v.regions != nil:
			for _, w := range v.regions {
				reads = append(reads, read{v, v.lower[w[0]:w[1]], w[0]})
			}
		default:
			reads = append(reads, read{v, v.lower, 0})
		}
	}
	var memo *lexical.Memo
	if len(reads) > 1 {
		memo = memoPool.Get().(*lexical.Memo)
		defer func() {
			memo.Reset()
			memoPool.Put(memo)
		}()
	}
	for _, rd := range reads {
		res := m.ScanMemo(rd.text, memo)
		for c := 1; c < len(m.Classes); c++ {
			best.Max[c] = max(best.Max[c], res.Max[c])
		}
		if res.Attack > best.Attack || bestView == "" {
			res.Max = best.Max
			best, bestView, offset = res, rd.v.kind, rd.at
		}
	}
	r.AIScan = AIScanReport{Engine: EngineLexical, Scores: map[Category]float64{}}
	for c := 1; c < len(m.Classes); c++ {
		r.AIScan.Scores[Category(m.Classes[c])] = round3(best.Max[c])
	}
	p := &e.opts.Policy
	if best.Attack >= p.aiScanThreshold(best.Class) {
		c := Category(m.Classes[best.Class])
		sev := Medium
		if best.Attack >= p.AIScanHigh {
			sev = High
		}
		info := e.opts.Data.Categories[c]
		r.Flags = append(r.Flags, Flag{ID: "AI-" + string(c), Title: "Reads like " + categoryWords(c),
			Category: c, Severity: sev, Source: SourceAIScan, Article: info.Article,
			Explanation: info.Description, Remediation: info.Remediation,
			Evidence: &Evidence{View: bestView, Offset: offset + best.Start, Length: best.End - best.Start, Probability: round3(best.Attack)}})
	}
	if e.opts.Judge == nil {
		return nil
	}
	a, err := e.askJudge(ctx, base)
	if err != nil {
		r.AIScan.Judge = &JudgeReport{Status: StatusError, Error: err.Error()}
		e.log.Warn("eval: judge failed", "err", err)
		return err
	}
	r.AIScan.Judge = &JudgeReport{Status: StatusOK, Verdict: a.Verdict, Categories: a.Categories, Confidence: a.Confidence, Reason: a.Reason}
	for _, c := range a.Categories {
		sev := Medium
		if a.Confidence >= 0.8 {
			sev = High
		}
		info := e.opts.Data.Categories[c]
		r.Flags = append(r.Flags, Flag{ID: "JUDGE-" + string(c), Title: "Judged " + categoryWords(c),
			Category: c, Severity: sev, Source: SourceAIScan, Article: info.Article,
			Explanation: info.Description + " The configured judge said: " + a.Reason, Remediation: info.Remediation})
	}
	return nil
}
