package live

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"
)

// Limit is a request rate per client: Max requests per Window, as a token
// bucket that holds Max and refills at Max per Window.
type Limit struct {
	Max    int
	Window time.Duration
}

// The specification's limits (section 8), for the routes to declare when
// they are registered (PostRoute.Limit).
var (
	ChatLimit  = Limit{20, time.Minute}
	PulseLimit = Limit{5, time.Minute}
	VoiceLimit = Limit{10, time.Minute}
)

// DefaultPostLimit limits every other POST route per client, and all
// requests with a body to paths that are not routes. GET routes are
// unlimited.
var DefaultPostLimit = Limit{30, time.Minute}

// Body limits. MaxBodyBytes is the most the server reads of any request
// body; each POST route has its own, smaller limit, DefaultBodyBytes unless
// it declares one.
const (
	MaxBodyBytes     = 64 << 10
	DefaultBodyBytes = 16 << 10
)

// clientIPs finds the client address of a request. Proxy headers are trusted
// only when the connection comes from a configured proxy, and then the
// right-most address that is not a trusted proxy is the client: every hop
// appends, so only the part our own proxies wrote can be believed.
type clientIPs struct {
	trusted []netip.Prefix
}

func newClientIPs(proxies []string) (*clientIPs, error) {
	c := &clientIPs{}
	for _, p := range proxies {
		if !strings.Contains(p, "/") {
			if addr, err := netip.ParseAddr(p); err == nil {
				p = netip.PrefixFrom(addr, addr.BitLen()).String()
			}
		}
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("live: trusted proxy %q: %w", p, err)
		}
		c.trusted = append(c.trusted, prefix.Masked())
	}
	return c, nil
}

func (c *clientIPs) isTrusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// of returns the client address of a request.
func (c *clientIPs) of(ctx *fiber.Ctx) netip.Addr {
	remote, _ := netip.AddrFromSlice(ctx.Context().RemoteIP())
	remote = remote.Unmap()
	if !c.isTrusted(remote) {
		return remote
	}
	hops := strings.Split(ctx.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop := strings.TrimSpace(hops[i])
		if host, _, err := net.SplitHostPort(hop); err == nil {
			hop = host
		}
		a, err := netip.ParseAddr(hop)
		if err != nil {
			break // a garbled header: trust nothing further left
		}
		if !c.isTrusted(a) {
			return a.Unmap()
		}
	}
	return remote
}

// rateLimiter keeps a token bucket per route and client, shared by every
// listener of a server. An IPv6 client is its /64: one host is given a
// whole prefix.
type rateLimiter struct {
	mu      sync.Mutex
	buckets map[bucketKey]*rate.Limiter
	sweepAt int // bucket count at which full buckets are dropped
}

type bucketKey struct {
	route  string // the operation, or "" for requests that match none
	client netip.Prefix
}

const minSweep = 1 << 12

func newRateLimiter() *rateLimiter {
	return &rateLimiter{buckets: map[bucketKey]*rate.Limiter{}, sweepAt: minSweep}
}

// take spends one request of client's budget on route. When the budget is
// spent it returns false and how long until the next request is allowed.
func (r *rateLimiter) take(route string, client netip.Addr, l Limit, now time.Time) (bool, time.Duration) {
	bits := 32
	if client.Is6() {
		bits = 64
	}
	key := bucketKey{route, netip.PrefixFrom(client, bits).Masked()}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[key]
	if b == nil {
		if len(r.buckets) >= r.sweepAt {
			r.sweep(now)
		}
		b = rate.NewLimiter(rate.Every(l.Window/time.Duration(l.Max)), l.Max)
		r.buckets[key] = b
	}
	res := b.ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		return false, wait
	}
	return true, 0
}

// sweep drops full buckets, which a new bucket would equal.
func (r *rateLimiter) sweep(now time.Time) {
	for k, b := range r.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(r.buckets, k)
		}
	}
	r.sweepAt = max(minSweep, 2*len(r.buckets))
}

// overLimit spends one request of the client's budget on route and, when
// the budget is spent, sets Retry-After and returns the 429 to answer. The
// zero Limit is no limit.
func (s *Server) overLimit(c *fiber.Ctx, route string, l Limit) *huma.ErrorModel {
	if !l.valid() {
		return nil
	}
	ok, wait := s.limiter.take(route, s.clientIP.of(c), l, time.Now())
	if ok {
		return nil
	}
	secs := int(math.Ceil(wait.Seconds()))
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	return statusProblem(fiber.StatusTooManyRequests,
		fmt.Sprintf("at most %d requests per %s from one client on this route; retry after %d seconds", l.Max, l.Window, secs))
}

// ParseLimit reads a limit written as "N/DURATION", e.g. "30/1m".
func ParseLimit(s string) (Limit, error) {
	n, d, ok := strings.Cut(s, "/")
	max, err := strconv.Atoi(n)
	if !ok || err != nil || max <= 0 {
		return Limit{}, fmt.Errorf("live: limit %q: want N/DURATION, e.g. 30/1m", s)
	}
	window, err := time.ParseDuration(d)
	if err != nil || window <= 0 {
		return Limit{}, fmt.Errorf("live: limit %q: want N/DURATION, e.g. 30/1m", s)
	}
	return Limit{Max: max, Window: window}, nil
}

// String formats the limit as ParseLimit reads it.
func (l Limit) String() string { return fmt.Sprintf("%d/%s", l.Max, l.Window) }

func (l Limit) valid() bool { return l.Max > 0 && l.Window > 0 }
