package live

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/limiter"
)

// Limit is a per-IP request rate.
type Limit struct {
	Max    int
	Window time.Duration
}

// DefaultLimits are the per-IP limits of the specification's table (section
// 8). Routes not listed get DefaultPostLimit; GET routes are unlimited.
var DefaultLimits = map[string]Limit{
	"/api/chat":  {20, time.Minute},
	"/api/pulse": {5, time.Minute},
	"/api/voice": {10, time.Minute},
}

// DefaultPostLimit limits every other POST route per IP.
var DefaultPostLimit = Limit{30, time.Minute}

// MaxBodyBytes is the largest request body the server reads at all; each
// POST route has its own smaller limit.
const MaxBodyBytes = 64 << 10

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
func (c *clientIPs) of(ctx *fiber.Ctx) string {
	remote, ok := netip.AddrFromSlice(ctx.Context().RemoteIP())
	if !ok {
		return ctx.Context().RemoteIP().String()
	}
	if !c.isTrusted(remote) {
		return remote.Unmap().String()
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
			return a.Unmap().String()
		}
	}
	return remote.Unmap().String()
}

// rateLimit returns a per-IP limiter for one route.
func (s *Server) rateLimit(l Limit) fiber.Handler {
	return limiter.New(limiter.Config{
		Max:          l.Max,
		Expiration:   l.Window,
		KeyGenerator: s.clientIP.of,
		LimitReached: func(c *fiber.Ctx) error {
			if c.GetRespHeader(fiber.HeaderRetryAfter) == "" {
				c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(l.Window.Seconds())))
			}
			return writeProblem(c, http.StatusTooManyRequests,
				fmt.Sprintf("at most %d requests per %s from one address; retry after %s seconds", l.Max, l.Window, c.GetRespHeader(fiber.HeaderRetryAfter)))
		},
	})
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
