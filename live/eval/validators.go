package eval

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
)

// A match validator checks one regex match (the first capture group when
// the regex has one, else the whole match) and says whether it counts.
type matchValidator func(s string, threshold float64) bool

// matchValidators are the validators a pattern with a regex may name.
var matchValidators = map[string]matchValidator{
	"luhn":       func(s string, _ float64) bool { return validCard(s) },
	"iban":       func(s string, _ float64) bool { return validIBAN(s) },
	"jwt":        func(s string, _ float64) bool { return validJWT(s) },
	"entropy":    func(s string, t float64) bool { return !placeholder(s) && shannon(s) >= t },
	"credential": validCredential,
	"ssn":        func(s string, _ float64) bool { return validSSN(s) },
	"phone":      func(s string, _ float64) bool { return validPhone(s) },
	"email":      func(s string, _ float64) bool { return realEmail(s) },
	"url_data":   urlCarriesData,
}

// signalValidators are the validators that read the normalisation's and
// the other patterns' findings instead of a match; a pattern naming one
// has no regex. Each returns the count it compares with the threshold.
var signalValidators = map[string]func(*scan) int{
	// invisible: zero-width and other invisible characters that have no
	// business in the text (emoji joiners and variation selectors excepted).
	"invisible": func(s *scan) int { return s.norm.Invisible },
	// tag_chars: Unicode tag characters, which hide ASCII text from readers.
	"tag_chars": func(s *scan) int { return s.norm.TagChars },
	// bidi: bidirectional embedding, override and isolate controls.
	"bidi": func(s *scan) int { return s.norm.Bidi },
	// mixed_script: words mixing Latin letters with Cyrillic or Greek
	// lookalikes, or lookalike-only words in Latin text.
	"mixed_script": func(s *scan) int { return s.norm.HomoglyphWords },
	// hidden_encoded: other patterns that matched only inside a decoded
	// layer (base64, hex, URL encoding, ROT13, tag characters).
	"hidden_encoded": func(s *scan) int { return s.hiddenEncoded },
	// hidden_chars: other patterns that matched only once character tricks
	// (lookalikes, invisibles, leetspeak, spaced letters) were undone.
	"hidden_chars": func(s *scan) int { return s.hiddenChars },
}

// digitsOf returns the ASCII digits of s.
func digitsOf(s string) []byte {
	d := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			d = append(d, c)
		}
	}
	return d
}

// validCard reports whether s holds 13 to 19 digits with a known issuer
// prefix that pass the Luhn check and are not one digit repeated.
func validCard(s string) bool {
	d := digitsOf(s)
	if len(d) < 13 || len(d) > 19 || allSame(d) {
		return false
	}
	switch d[0] {
	case '2', '3', '4', '5', '6':
	default:
		return false
	}
	return luhn(d)
}

// luhn reports whether the digits d pass the Luhn checksum.
func luhn(d []byte) bool {
	sum := 0
	for i := range d {
		n := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

func allSame(d []byte) bool {
	for _, c := range d {
		if c != d[0] {
			return false
		}
	}
	return true
}

// ibanLengths is the length of an IBAN in each country that issues them.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
	"ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20,
	"LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
	"MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29,
	"RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26,
	"UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

// validIBAN reports whether s (spaces allowed) is an IBAN of the right
// length for its country whose mod-97 check (ISO 13616) gives 1.
func validIBAN(s string) bool {
	s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	if len(s) < 15 || ibanLengths[s[:2]] != len(s) {
		return false
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// validJWT reports whether s is three base64url segments whose first
// decodes to a JSON object naming an algorithm.
func validJWT(s string) bool {
	head, _, ok := strings.Cut(s, ".")
	if !ok {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(head, "="))
	if err != nil {
		return false
	}
	var h map[string]any
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	_, ok = h["alg"]
	return ok
}

// shannon returns the Shannon entropy of s in bits per byte.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	return entropyOf(&counts, len(s))
}

// entropyOf returns the Shannon entropy, in bits, of n bytes counted in c.
func entropyOf(c *[256]int, n int) float64 {
	h, fn := 0.0, float64(n)
	for _, k := range c {
		if k > 0 {
			p := float64(k) / fn
			h -= p * math.Log2(p)
		}
	}
	return h
}

// placeholders are words that mark a value as an example, not a secret.
var placeholders = []string{"example", "xxxx", "****", "...", "your", "<", ">", "{{", "${", "redacted",
	"placeholder", "changeme", "dummy", "sample", "1234567", "abcdef", "test_key", "fake", "insert", "here"}

// placeholder reports whether s looks like an example value.
func placeholder(s string) bool {
	l := strings.ToLower(s)
	for _, p := range placeholders {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// validCredential reports whether the value assigned to a credential-like
// name looks like a real secret: no placeholder, no code expression, at
// least two kinds of character and enough entropy.
func validCredential(s string, threshold float64) bool {
	if placeholder(s) || strings.ContainsAny(s, "()[]$%{}<>;") {
		return false
	}
	var lower, upper, digit, other bool
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	kinds := 0
	for _, k := range []bool{lower, upper, digit, other} {
		if k {
			kinds++
		}
	}
	return kinds >= 2 && (digit || other || upper && lower) && shannon(s) >= threshold
}

// validSSN reports whether s (ddd-dd-dddd) could be a US Social Security
// number: area not 000, 666 or 9xx, group not 00, serial not 0000.
func validSSN(s string) bool {
	d := digitsOf(s)
	if len(d) != 9 {
		return false
	}
	area, group, serial := string(d[:3]), string(d[3:5]), string(d[5:])
	return area != "000" && area != "666" && d[0] != '9' && group != "00" && serial != "0000" &&
		string(d) != "123456789" && !allSame(d)
}

// validPhone reports whether s holds 8 to 15 digits (E.164) that are not
// one digit repeated or a plain ascending run.
func validPhone(s string) bool {
	d := digitsOf(s)
	return len(d) >= 8 && len(d) <= 15 && !allSame(d) && !strings.Contains("01234567890123456789", string(d))
}

// reservedDomains are the names set aside for documentation and tests
// (RFC 2606, RFC 6761): an address there belongs to nobody.
var reservedDomains = []string{"example.com", "example.org", "example.net", "example.edu", ".example",
	".test", ".invalid", ".localhost", ".local", "localhost"}

// realEmail reports whether the address s is outside the reserved domains
// and its local part is not a placeholder.
func realEmail(s string) bool {
	local, domain, ok := strings.Cut(strings.ToLower(s), "@")
	if !ok {
		return false
	}
	for _, r := range reservedDomains {
		if domain == strings.TrimPrefix(r, ".") || strings.HasSuffix(domain, r) || strings.HasSuffix(domain, "."+r) {
			return false
		}
	}
	switch local {
	case "user", "name", "someone", "you", "your.name", "firstname.lastname", "username", "email", "foo", "bar":
		return false
	}
	return true
}

// urlCarriesData reports whether a URL's query or path carries a value of
// at least threshold characters, or a template slot to fill with data.
func urlCarriesData(s string, threshold float64) bool {
	if strings.ContainsAny(s, "{[$") {
		return true
	}
	_, q, ok := strings.Cut(s, "?")
	if !ok {
		return false
	}
	for kv := range strings.SplitSeq(q, "&") {
		_, v, _ := strings.Cut(kv, "=")
		if float64(len(v)) >= threshold {
			return true
		}
	}
	return false
}
