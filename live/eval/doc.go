// Package eval is the constitutional evaluation pipeline behind the v1
// verification API: it decides whether a text (a prompt, or a model's
// response) is fit to act on, and says why, flag by flag.
//
// It is pure: no HTTP, no storage, and no clock except the injected
// Options.Now. The patterns and exemplars are data (content/eval/), loaded
// by the caller with LoadFS and passed to New as values.
//
// The calls a user makes:
//
//	data, err := eval.LoadFS(os.DirFS("content"))
//	ev, err := eval.New(eval.Options{Data: data})
//	report, err := ev.Evaluate(ctx, text)           // POST /api/v1/evaluate
//	gov, err := ev.Govern(ctx, prompt, response)    // POST /api/v1/govern
//
// Evaluate runs seven named stages in order, each timed in the Report:
//
//  1. intake: size limit, UTF-8 validity, SHA-256 of the input (reports and
//     records keep the hash, never the text);
//  2. normalise: NFKC, invisible and bidirectional controls removed and
//     counted, homoglyphs folded to Latin, leetspeak and letter spacing
//     undone, and bounded decoding of base64, hex, URL-encoded, ROT13 and
//     Unicode-tag layers; every view is scanned;
//  3. precheck: the 52 patterns (RE2 expressions and validators such as
//     Luhn, IBAN mod-97 and entropy thresholds), each regex gated by
//     literals derived from it so only plausible ones run;
//  4. entropy: Shannon entropy by window, compression ratio, repetition and
//     script mixing;
//  5. ai_scan: character n-gram similarity to the attack exemplars, and,
//     when configured, a Judge that must answer strict JSON in time (a
//     malformed or late answer is a stage error, never "clean");
//  6. policy: flags mapped to constitution articles, a score, a decision;
//  7. explain: a sentence for every flag, counters, and one Record (hashes
//     and identifiers only) handed to the Recorder.
//
// Bad input (empty, over the size limit, invalid UTF-8) is an *InputError
// matching ErrInput, which the route layer answers with 400.
//
// Telemetry (an Aggregator fed by Records) and Compliance (a report over
// Records in a window) are pure too: the caller passes the records in.
//
// An Evaluator is safe for concurrent use.
package eval
