package main

import (
	"math"
	"slices"
	"time"
)

// percentile is the nearest-rank percentile p (0 < p <= 100) of ds, in
// microseconds; ds is not modified.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return us(s[max(0, min(i, len(s)-1))])
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// median of plain numbers (the round figures); the mean of the two middle
// ones for an even count.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// round1 keeps one decimal, which is all loopback timings deserve.
func round1(x float64) float64 { return math.Round(x*10) / 10 }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
