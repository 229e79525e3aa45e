package towns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/proofsite/proofsite/live/memory"
)

// ErrNoResponder reports a chat or an exchange on towns opened without a
// Responder.
var ErrNoResponder = errors.New("towns: no node answers here")

// Responder answers as a town's node through the provider behind it
// (live/ai, adapted by live.TownResponder).
type Responder interface {
	Reply(ctx context.Context, designation string, q Question) (Reply, error)
}

// Question is what a town's node is asked: the message, and what its
// provider receives with it.
type Question struct {
	Message string
	// Memory is the town's memory, newest first (at most memoryItems
	// entries and memoryBytes in all).
	Memory []string
	// From is the designation of the node that sent Message in an
	// inter-node exchange; empty for a visitor's chat message.
	From string
}

// Reply is a node's answer: which node, provider and model answered, and
// the text.
type Reply struct {
	Node     string `json:"node" doc:"Designation of the node that answered"`
	Provider string `json:"provider" doc:"The provider that answered: anthropic, openai or offline"`
	Model    string `json:"model"`
	Text     string `json:"reply"`
	Notice   string `json:"notice,omitempty" doc:"Set when the node answers offline instead of its configured provider, and says why"`
}

// The town's memory given with each message: the newest memories of its
// node, at most memoryItems of them and memoryBytes in all.
const (
	memoryItems = 20
	memoryBytes = 8 << 10
)

// MaxChatRunes bounds a chat message and an exchange's payload, in
// characters.
const MaxChatRunes = 2000

// Message is one chat exchange of a town, as kept.
type Message struct {
	Town          string    `json:"town"`
	At            time.Time `json:"at"`
	Message       string    `json:"message"`
	Reply         Reply     `json:"reply"`
	MemoriesGiven int       `json:"memories_given" doc:"How many of the town's memories the node received with the message"`
}

// Chat sends a visitor's message to the town's node with the town's
// memory, keeps the message and the reply, and returns them. A message
// that is refused (ErrInvalid) reaches no provider and is not kept.
func (t *Towns) Chat(ctx context.Context, id, message string) (Message, error) {
	tw, err := t.town(id)
	if err != nil {
		return Message{}, err
	}
	if message, err = checkText("message", message, MaxChatRunes, true); err != nil {
		return Message{}, err
	}
	reply, n, err := t.ask(ctx, tw, message, "")
	if err != nil {
		return Message{}, err
	}
	m := Message{Town: tw.ID, At: t.opts.Now().UTC(), Message: message, Reply: reply, MemoriesGiven: n}
	if err := t.db.insertMessage(context.WithoutCancel(ctx), m); err != nil {
		return Message{}, fmt.Errorf("%w: store write of a chat message: %w", ErrWrite, err)
	}
	tw.messages.Add(1)
	return m, nil
}

// Messages returns the last limit chat messages of a town, newest first.
func (t *Towns) Messages(ctx context.Context, id string, limit int) ([]Message, error) {
	tw, err := t.town(id)
	if err != nil {
		return nil, err
	}
	ms, err := t.db.messages(ctx, tw.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("towns: messages of %s: %w", tw.ID, err)
	}
	return ms, nil
}

// ask has tw's node answer message, sent by the node from (empty for a
// visitor), with the town's memory, and says how many memories went with
// it.
func (t *Towns) ask(ctx context.Context, tw *town, message, from string) (Reply, int, error) {
	if t.opts.Responder == nil {
		return Reply{}, 0, ErrNoResponder
	}
	mem, err := t.memoryOf(ctx, tw)
	if err != nil {
		return Reply{}, 0, err
	}
	reply, err := t.opts.Responder.Reply(ctx, tw.node.Designation, Question{Message: message, Memory: mem, From: from})
	return reply, len(mem), err
}

// memoryOf returns the town's memory as text, newest first: each memory's
// content, a JSON string as its text and any other value as its canonical
// JSON.
func (t *Towns) memoryOf(ctx context.Context, tw *town) ([]string, error) {
	ms, err := t.opts.Memory.Retrieve(ctx, tw.memoryID, memoryItems)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMemory, tw.memoryID, err)
	}
	out, size := []string{}, 0
	for _, m := range ms {
		text := memoryText(m)
		if size += len(text); size > memoryBytes {
			break
		}
		out = append(out, text)
	}
	return out, nil
}

func memoryText(m memory.Memory) string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	return string(m.Content)
}
