package content

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in the content, located by file and line.
type Error struct {
	File string // path relative to the content directory, slash-separated
	Line int    // 1-based; 0 when the problem concerns the whole file
	Msg  string
}

// Error formats the problem as "file:line: message", the form editors and
// terminals turn into links.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func errorf(file string, line int, format string, args ...any) *Error {
	return &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// ErrInvalid is matched (errors.Is) by every error Load returns for bad
// content, as opposed to I/O failures.
var ErrInvalid = errors.New("content: invalid")

// Errors is every content problem found by one load, sorted by file and line.
type Errors []*Error

// Error lists the problems one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Is reports that Errors is an ErrInvalid.
func (es Errors) Is(target error) bool { return target == ErrInvalid }

// Unwrap exposes the individual problems to errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func sortErrors(es []*Error) Errors {
	slices.SortStableFunc(es, func(a, b *Error) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return Errors(es)
}
