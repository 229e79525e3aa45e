package live

import (
	"context"
	"net/http"
	"runtime"
)

// turns admits CPU-bound work in arrival order, a bounded number at a
// time. With 64 connections asking for evaluations at once, running them
// all together shares the cores among 64 goroutines and leaves each
// one's latency to the scheduler; taking turns runs as many as there are
// cores and answers the others first come, first served, so the latency
// of every request is close to the mean instead of a scheduler-random
// tail. A nil turns admits everything at once.
type turns chan struct{}

// newTurns returns turns of n at a time: 0 means runtime.GOMAXPROCS(0),
// a negative n no bound (nil).
func newTurns(n int) turns {
	switch {
	case n < 0:
		return nil
	case n == 0:
		n = runtime.GOMAXPROCS(0)
	}
	return make(turns, n)
}

// wait waits for a turn; waiters are admitted in the order they arrived
// (a channel's blocked senders are served first in, first out). It
// returns a problem, and takes no turn, if ctx ends first. Every turn
// taken is given back with done.
func (t turns) wait(ctx context.Context) error {
	if t == nil {
		return nil
	}
	select {
	case t <- struct{}{}:
		return nil
	default:
	}
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return statusProblem(http.StatusServiceUnavailable, "the evaluation did not start: the request ended while it waited for its turn ("+ctx.Err().Error()+")")
	}
}

// run runs f in a turn, and gives the turn back even if f panics; f
// does not run if ctx ends while it waits (wait's problem).
func (t turns) run(ctx context.Context, f func()) error {
	if err := t.wait(ctx); err != nil {
		return err
	}
	defer t.done()
	f()
	return nil
}

// done gives a turn back.
func (t turns) done() {
	if t != nil {
		<-t
	}
}
