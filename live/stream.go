package live

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/proofsite/proofsite/live/ai"
	"github.com/valyala/fasthttp"
)

// acceptsEventStream reports whether an Accept header asks for
// text/event-stream (and does not refuse it with q=0).
func acceptsEventStream(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		media, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || media != "text/event-stream" {
			continue
		}
		q, err := strconv.ParseFloat(cmp.Or(params["q"], "1"), 64)
		return err == nil && q > 0
	}
	return false
}

// sseEvent is one server-sent event of a streamed answer.
type sseEvent struct {
	name string // delta, reply or error
	data []byte // one line of JSON
	err  error  // set on an error before anything was sent
}

// streamDelta is the data of a delta event.
type streamDelta struct {
	Text string `json:"text"`
}

// stream answers message from node as server-sent events: a delta event
// per piece of the reply, then a reply event with the whole answer (built
// by answer, which signs it), or an error event with a problem. A provider
// that fails before its first piece is answered as a problem with its own
// status instead, as in JSON: stream returns that problem. Otherwise it
// sets up the event stream on c and returns nil; the handler then returns
// no body and huma leaves the response to the stream.
func (e *aiEdge) stream(ctx context.Context, c *fiber.Ctx, node *ai.Node, message string, answer func(ai.Reply) (any, error)) error {
	// The node's call outlives the handler: it ends with its own timeout,
	// or when the client goes away (cancel).
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	events := make(chan sseEvent, 16)
	go func() {
		defer close(events)
		send := func(ev sseEvent) error {
			select {
			case events <- ev:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		sent := false
		r, err := node.Stream(ctx, message, func(text string) error {
			data, _ := json.Marshal(streamDelta{Text: text})
			sent = true
			return send(sseEvent{name: "delta", data: data})
		})
		var a any
		if err == nil {
			a, err = answer(r)
		}
		if err != nil {
			p := e.problem(err)
			if !sent {
				send(sseEvent{err: p})
				return
			}
			data, _ := json.Marshal(p)
			send(sseEvent{name: "error", data: data})
			return
		}
		data, err := json.Marshal(a)
		if s, ok := a.(signedEncoding); ok && s.signedJSON() != nil {
			data = s.signedJSON() // one line: JSON strings escape line ends
		}
		if err != nil {
			data, _ = json.Marshal(statusProblem(500, ""))
			send(sseEvent{name: "error", data: data})
			return
		}
		send(sseEvent{name: "reply", data: data})
	}()
	first, ok := <-events
	if !ok || first.err != nil {
		cancel()
		if first.err != nil {
			return first.err
		}
		return fmt.Errorf("live: stream: no event")
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set("X-Accel-Buffering", "no") // a proxy passes events on as they come
	conn := c.Context().Conn()
	timeout := e.writeTimeout
	c.Context().SetBodyStreamWriter(fasthttp.StreamWriter(func(w *bufio.Writer) {
		defer func() {
			cancel()
			for range events { // let the node's call end
			}
		}()
		for ev, ok := first, true; ok; ev, ok = <-events {
			// The server's write timeout bounds a response; a stream lives
			// on as long as each write is in time.
			conn.SetWriteDeadline(time.Now().Add(timeout))
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
			if w.Flush() != nil {
				return // the client went away
			}
		}
	}))
	return nil
}
