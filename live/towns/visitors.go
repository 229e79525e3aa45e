package towns

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// visitors remembers who visited each town today as salted hashes: HMAC
// of the town and the client's address under a salt drawn for the current
// UTC day. The salt and the hashes live in memory only and are replaced at
// midnight, so yesterday's hashes cannot be linked to an address by anyone.
type visitors struct {
	mu      sync.Mutex
	day     string // UTC date the salt belongs to
	salt    [32]byte
	seen    map[[16]byte]struct{}
	byTown  map[string]int64 // distinct visitors today
	newSalt func(b []byte)   // crypto/rand; tests may replace it
}

// first records a visit of client to town at now and reports whether it is
// the client's first of the day there. An IPv6 client is its /64, as for
// rate limits: one host is given a whole prefix.
func (v *visitors) first(town string, client netip.Addr, now time.Time) bool {
	client = client.Unmap()
	bits := 32
	if client.Is6() {
		bits = 64
	}
	prefix := netip.PrefixFrom(client, bits).Masked().Addr().As16()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rotate(now)
	mac := hmac.New(sha256.New, v.salt[:])
	mac.Write([]byte(town))
	mac.Write([]byte{0})
	mac.Write(prefix[:])
	var key [16]byte
	copy(key[:], mac.Sum(nil))
	if _, ok := v.seen[key]; ok {
		return false
	}
	v.seen[key] = struct{}{}
	v.byTown[town]++
	return true
}

// today returns the distinct visitors of town since UTC midnight.
func (v *visitors) today(town string, now time.Time) int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rotate(now)
	return v.byTown[town]
}

// rotate draws a new salt and forgets the day's visits when the UTC day
// has changed.
func (v *visitors) rotate(now time.Time) {
	day := now.UTC().Format(time.DateOnly)
	if day == v.day {
		return
	}
	fill := v.newSalt
	if fill == nil {
		fill = func(b []byte) { rand.Read(b) }
	}
	fill(v.salt[:])
	v.day, v.seen, v.byTown = day, map[[16]byte]struct{}{}, map[string]int64{}
}

// Visit counts a visit of client to a town: once per client, town and
// UTC day. Only the count is stored.
func (t *Towns) Visit(ctx context.Context, id string, client netip.Addr) error {
	tw, err := t.town(id)
	if err != nil {
		return err
	}
	if !client.IsValid() || !t.visitors.first(tw.ID, client, t.opts.Now()) {
		return nil
	}
	tw.visitors.Add(1)
	if err := t.db.addVisitor(context.WithoutCancel(ctx), tw.ID); err != nil {
		return fmt.Errorf("%w: visitor count of %s: %w", ErrWrite, tw.ID, err)
	}
	return nil
}
