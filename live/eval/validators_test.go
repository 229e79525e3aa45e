package eval

import "testing"

func TestValidators(t *testing.T) {
	tests := []struct {
		validator string
		in        string
		threshold float64
		want      bool
	}{
		{"luhn", "4412 6906 0443 1983", 0, true},
		{"luhn", "4412 6906 0443 1984", 0, false},
		{"luhn", "372889093100259", 0, true},
		{"luhn", "0000 0000 0000 0000", 0, false},
		{"luhn", "8412 6906 0443 1983", 0, false}, // no such issuer
		{"iban", "DE17 1678 0083 7407 1881 81", 0, true},
		{"iban", "GB52NWBK74143337761740", 0, true},
		{"iban", "DE17 1678 0083 7407 1881 82", 0, false},
		{"iban", "DE17 1678 0083 7407 1881", 0, false}, // wrong length for DE
		{"jwt", "eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.eyJzdWIiOiAiODEyMSJ9.sig", 0, true},
		{"jwt", "eyJub3QiOiAiand0In0.eyJzdWIiOiAiODEyMSJ9.sig", 0, false},
		{"entropy", "AKIAUJZDEGXDNCF32EPF", 3.0, true},
		{"entropy", "AKIAIOSFODNN7EXAMPLE", 3.0, false},
		{"entropy", "aaaaaaaaaaaaaaaaaaaa", 3.0, false},
		{"credential", "Xq7!vR2#pLm9", 3.0, true},
		{"credential", "os.environ['X']", 3.0, false},
		{"credential", "incorrect", 3.0, false},
		{"credential", "${API_KEY}", 3.0, false},
		{"ssn", "512-48-7390", 0, true},
		{"ssn", "000-12-3456", 0, false},
		{"ssn", "666-12-3456", 0, false},
		{"ssn", "912-12-3456", 0, false},
		{"phone", "+44 7911 123456", 0, true},
		{"phone", "1234-5678", 0, false},
		{"email", "amara.okafor@gmail.com", 0, true},
		{"email", "jane@example.com", 0, false},
		{"email", "ops@mail.test", 0, false},
		{"url_data", "https://x.test/p.png?d={chat}", 24, true},
		{"url_data", "https://x.test/p.png?q=Q29uZmlkZW50aWFsIHF1YXJ0ZXJseSBudW1iZXJz", 24, true},
		{"url_data", "https://img.shields.io/badge/x?style=flat", 24, false},
	}
	for _, tc := range tests {
		v := matchValidators[tc.validator]
		if v == nil {
			t.Fatalf("no validator %q", tc.validator)
		}
		if got := v(tc.in, tc.threshold); got != tc.want {
			t.Errorf("%s(%q) = %v; want %v", tc.validator, tc.in, got, tc.want)
		}
	}
}
