package passwd_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"cpesuite/internal/platform/passwd"
)

func TestTemporary(t *testing.T) {
	const draws = 2000
	seen := make(map[string]bool, draws)
	for range draws {
		pw, err := passwd.Temporary()
		if err != nil {
			t.Fatalf("Temporary: %v", err)
		}
		if len(pw) != 16 || utf8.RuneCountInString(pw) != 16 {
			t.Fatalf("Temporary() = %q, want 16 ASCII characters", pw)
		}
		if strings.ContainsAny(pw, "0O1lI") {
			t.Fatalf("Temporary() = %q contains a look-alike character", pw)
		}
		for _, class := range []string{"ABCDEFGHJKLMNPQRSTUVWXYZ", "abcdefghijkmnopqrstuvwxyz", "23456789", "!#%*+-=?@_"} {
			if !strings.ContainsAny(pw, class) {
				t.Fatalf("Temporary() = %q has no character of %q", pw, class)
			}
		}
		// People will be made to change it, but it must be acceptable
		// under the policy they will then face.
		if err := passwd.Check(pw, ""); err != nil {
			t.Fatalf("Temporary() = %q fails the policy: %v", pw, err)
		}
		if seen[pw] {
			t.Fatalf("Temporary() repeated %q", pw)
		}
		seen[pw] = true
	}
}

func TestOTP(t *testing.T) {
	for n := 4; n <= 12; n++ {
		for range 200 {
			otp, err := passwd.OTP(n)
			if err != nil {
				t.Fatalf("OTP(%d): %v", n, err)
			}
			if len(otp) != n || strings.Trim(otp, "0123456789") != "" {
				t.Fatalf("OTP(%d) = %q, want %d decimal digits", n, otp, n)
			}
		}
	}
	for _, n := range []int{-1, 0, 3, 13, 20} {
		if otp, err := passwd.OTP(n); err == nil {
			t.Fatalf("OTP(%d) = %q, want an error", n, otp)
		}
	}
}

// TestOTPUniform is a crude chi-square test on the first digit, which is
// where a modulo bias or a lost leading zero would show. With 9 degrees of
// freedom the statistic exceeds 60 with probability below 1e-9, so the
// bound catches gross bias without ever flaking.
func TestOTPUniform(t *testing.T) {
	const draws = 20000
	var counts [10]int
	for range draws {
		otp, err := passwd.OTP(6)
		if err != nil {
			t.Fatal(err)
		}
		counts[otp[0]-'0']++
	}
	const expected = draws / 10.0
	chi2 := 0.0
	for _, c := range counts {
		d := float64(c) - expected
		chi2 += d * d / expected
	}
	if chi2 > 60 {
		t.Fatalf("first digits %v: chi-square %.1f > 60, not uniform", counts, chi2)
	}
}

// TestTemporaryUniform checks the same way that every alphabet character
// appears about equally often.
func TestTemporaryUniform(t *testing.T) {
	const draws = 3000
	counts := map[rune]int{}
	for range draws {
		pw, err := passwd.Temporary()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range pw {
			counts[r]++
		}
	}
	if len(counts) != 67 {
		t.Fatalf("saw %d distinct characters, want the 67 of the alphabet", len(counts))
	}
	// Redrawing passwords that miss a class slightly favours the small
	// classes (digits, symbols); the bound allows for it and still catches
	// a character that never or nearly always appears.
	expected := float64(draws*16) / 67
	for r, c := range counts {
		if float64(c) < expected*0.7 || float64(c) > expected*1.4 {
			t.Fatalf("character %q appeared %d times, expected about %.0f", r, c, expected)
		}
	}
}
