package eval

import (
	"errors"
	"fmt"
)

// Errors a caller branches on with errors.Is.
var (
	// ErrInput matches every error caused by the text a caller sent
	// (an *InputError): the route layer answers it with 400.
	ErrInput = errors.New("eval: bad input")
	// ErrEmpty: the text is empty or only white space.
	ErrEmpty = errors.New("eval: text is empty")
	// ErrTooLarge: the text is longer than Limits.MaxBytes.
	ErrTooLarge = errors.New("eval: text is too large")
	// ErrInvalidUTF8: the text is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("eval: text is not valid UTF-8")

	// ErrData matches every problem in the pattern and exemplar data
	// (LoadFS, New).
	ErrData = errors.New("eval: bad data")

	// ErrJudge matches every failure of the configured Judge: an error,
	// a late answer, or an answer that is not the strict JSON asked for.
	ErrJudge = errors.New("eval: judge failed")
	// ErrJudgeLate: the judge did not answer within Options.JudgeTimeout.
	ErrJudgeLate = errors.New("eval: judge answered late")
	// ErrJudgeMalformed: the judge's answer is not the strict JSON asked for.
	ErrJudgeMalformed = errors.New("eval: judge answer malformed")

	// ErrRecord: the Recorder failed; the report was computed but not kept.
	ErrRecord = errors.New("eval: record failed")

	// ErrHoursOutOfRange: a compliance window outside 1 to MaxComplianceHours.
	ErrHoursOutOfRange = errors.New("eval: hours out of range")
)

// InputError is a text a caller sent that cannot be evaluated. It matches
// ErrInput and its reason (ErrEmpty, ErrTooLarge or ErrInvalidUTF8).
type InputError struct {
	Field  string // the request field: "text", "prompt" or "response"
	Reason error  // ErrEmpty, ErrTooLarge or ErrInvalidUTF8
	Detail string // a sentence for the person who sent it
}

func (e *InputError) Error() string {
	return fmt.Sprintf("eval: %s: %s", e.Field, e.Detail)
}

// Unwrap lets errors.Is match both the reason and ErrInput.
func (e *InputError) Unwrap() []error { return []error{e.Reason, ErrInput} }

// DataError is one problem in the pattern or exemplar data, located by file
// and, where known, pattern id.
type DataError struct {
	File    string
	Pattern string // pattern id, when the problem is in one pattern
	Msg     string
}

func (e *DataError) Error() string {
	if e.Pattern != "" {
		return fmt.Sprintf("eval: %s: pattern %s: %s", e.File, e.Pattern, e.Msg)
	}
	return fmt.Sprintf("eval: %s: %s", e.File, e.Msg)
}

// Unwrap makes every DataError match ErrData.
func (e *DataError) Unwrap() error { return ErrData }

// joinErrors joins errs, or returns the only one.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
