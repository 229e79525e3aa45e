package live

import (
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// fixedHeader is a response header with a constant value, both kept as
// bytes with the name in canonical form. Setting it skips fasthttp's
// normalising of the name, which c.Set does on every call: under wrk that
// was a quarter of the static handler's time.
type fixedHeader struct{ name, value []byte }

// set sets the header on c's response, replacing any earlier value.
func (h fixedHeader) set(c *fiber.Ctx) { h.put(&c.Response().Header) }

// put sets the header on a response header, replacing any earlier value.
func (h fixedHeader) put(r *fasthttp.ResponseHeader) { r.SetCanonical(h.name, h.value) }

func newFixedHeader(name, value string) fixedHeader {
	return fixedHeader{name: []byte(name), value: []byte(value)}
}

// The fixed headers of every response, of the API and of static files.
var (
	nosniffHeader        = newFixedHeader(fiber.HeaderXContentTypeOptions, "nosniff")
	referrerPolicyHeader = newFixedHeader(fiber.HeaderReferrerPolicy, "strict-origin-when-cross-origin")
	frameDenyHeader      = newFixedHeader(fiber.HeaderXFrameOptions, "DENY")
	noStoreHeader        = newFixedHeader(fiber.HeaderCacheControl, "no-store")
	varyHeader           = newFixedHeader(fiber.HeaderVary, "Accept, Accept-Encoding")
	immutableHeader      = newFixedHeader(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	revalidateHeader     = newFixedHeader(fiber.HeaderCacheControl, "public, max-age=0, must-revalidate")
	htmlCSPHeader        = newFixedHeader(fiber.HeaderContentSecurityPolicy, htmlCSP)
	gzipHeader           = newFixedHeader(fiber.HeaderContentEncoding, "gzip")
)

// commonHeaders are set on every response (putCommonHeaders).
var commonHeaders = [...]fixedHeader{nosniffHeader, referrerPolicyHeader, frameDenyHeader}

func putCommonHeaders(h *fasthttp.ResponseHeader) {
	for _, fh := range commonHeaders {
		fh.put(h)
	}
}

// fixedHeaders lists them for the tests.
var fixedHeaders = []fixedHeader{nosniffHeader, referrerPolicyHeader, frameDenyHeader, noStoreHeader, varyHeader,
	immutableHeader, revalidateHeader, htmlCSPHeader, gzipHeader}
