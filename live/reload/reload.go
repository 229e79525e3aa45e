// Package reload tells open browser tabs, over server-sent events, that the
// site was rebuilt or that the build failed. It is used by proofsite watch
// only; a plain build never references it.
//
// The hub serves two routes under its prefix: client.js, the small script
// every page loads in watch mode, and events, the event stream. Publish a
// Build after every successful build (with the output paths that changed)
// and a Problem after every failed one. Each stream opens with a hello that
// names this process, so a tab reconnecting to a restarted server (after a
// template change) reloads itself:
//
//	hub := reload.New()
//	hub.Register(app, "/__proofsite")
//	hub.Publish(reload.Build(res.Written))
package reload

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

//go:embed client.js
var clientJS []byte

// Event is one message to the browsers.
type Event struct {
	Name    string   `json:"-"`                 // "build" or "problem"
	Paths   []string `json:"paths,omitempty"`   // outputs that changed (build)
	Message string   `json:"message,omitempty"` // what failed (problem)
}

// Build is the event of a successful build that changed paths.
func Build(paths []string) Event {
	if paths == nil {
		paths = []string{}
	}
	return Event{Name: "build", Paths: paths}
}

// Problem is the event of a failed build.
func Problem(message string) Event { return Event{Name: "problem", Message: message} }

// Hub fans events out to every connected browser. Its methods are safe for
// concurrent use.
type Hub struct {
	instance  string // differs per process, so tabs reload after a restart
	mu        sync.Mutex
	clients   map[chan Event]struct{}
	problem   *Event // the current failure, sent to tabs that connect during it
	closed    bool
	keepAlive time.Duration
}

// New returns a Hub.
func New() *Hub {
	return &Hub{
		instance:  strconv.FormatInt(time.Now().UnixNano(), 36),
		clients:   map[chan Event]struct{}{},
		keepAlive: 15 * time.Second,
	}
}

// Publish sends ev to every connected browser. A client too slow to take it
// misses it rather than holding up the build.
func (h *Hub) Publish(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Name == "problem" {
		h.problem = &ev
	} else {
		h.problem = nil
	}
	for c := range h.clients {
		select {
		case c <- ev:
		default:
		}
	}
}

// Close ends every event stream so that a server can shut down.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for c := range h.clients {
		close(c)
		delete(h.clients, c)
	}
}

func (h *Hub) subscribe() (chan Event, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	c := make(chan Event, 8)
	if h.problem != nil {
		c <- *h.problem
	}
	h.clients[c] = struct{}{}
	return c, true
}

func (h *Hub) unsubscribe(c chan Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.clients[c]; ok {
		delete(h.clients, c)
		close(c)
	}
}

// Register mounts client.js and events under prefix.
func (h *Hub) Register(r fiber.Router, prefix string) {
	r.Get(prefix+"/client.js", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Send(clientJS)
	})
	r.Get(prefix+"/events", h.stream)
}

// stream writes events to one browser until it goes away or the hub closes.
func (h *Hub) stream(c *fiber.Ctx) error {
	events, ok := h.subscribe()
	if !ok {
		return fiber.ErrServiceUnavailable
	}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderConnection, "keep-alive")
	conn := c.Context().Conn()
	c.Context().SetBodyStreamWriter(fasthttp.StreamWriter(func(w *bufio.Writer) {
		defer h.unsubscribe(events)
		tick := time.NewTicker(h.keepAlive)
		defer tick.Stop()
		// The server's write timeout bounds a response; a stream lives on
		// as long as each write is in time.
		conn.SetWriteDeadline(time.Now().Add(2 * h.keepAlive))
		fmt.Fprintf(w, "retry: 500\nevent: hello\ndata: {\"instance\":%q}\n\n", h.instance)
		if w.Flush() != nil {
			return
		}
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					return
				}
				data, _ := json.Marshal(ev)
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Name, data)
			case <-tick.C:
				fmt.Fprint(w, ": keep-alive\n\n")
			}
			conn.SetWriteDeadline(time.Now().Add(2 * h.keepAlive))
			if w.Flush() != nil {
				return // the browser went away
			}
		}
	}))
	return nil
}
