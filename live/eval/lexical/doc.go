// Package lexical is a small learned text classifier: multinomial
// logistic regression over words, pairs of consecutive words, word
// prefixes (a crude stem) and, with a Lexicon, the classes of words a
// segment holds and every pair of them (a request frame with a weapon), so
// that what is learned from one word of a class carries to the others. The
// evaluator (live/eval) uses it as its offline AI scan; the weights are
// data (content/eval/lexical.tsv, which keeps the lexicon too), trained
// by cmd/evaltrain on the project's development split, exemplars and
// lexicon (content/eval/lexicon.txt) only.
//
// Features are read off a "squashed" text: ASCII letters lowered, letters
// and digits kept, every other run of bytes one space. The evaluator hands
// the model texts already normalised and lowered in every script, and
// trains it on the same reading of its examples (eval.LexicalText). A text is cut into
// segments (at . ! ? ; and line breaks) and each segment's features are
// summed, so the score of any run of consecutive segments is the sum of
// theirs. A window's vector is its feature counts over the square root of
// their total, and its class probabilities are the softmax of the bias
// plus the weights. Scan scores every run of one to three segments and
// the whole text, and keeps the window most like an attack.
//
// The calls a user makes:
//
//	m, err := lexical.Parse(r)              // read weights
//	res := m.Scan(text)                     // best window of a text
//	m, cv := lexical.Train(examples, opts)  // learn weights (cmd/evaltrain)
//	_, err = m.WriteTo(w)                   // write them
//
// Training is deterministic: full-batch L-BFGS on a strictly convex
// objective (cross-entropy plus an L2 penalty), so the same examples and
// options give the same weights, to the precision the file keeps.
//
// A Model is safe for concurrent use.
package lexical
