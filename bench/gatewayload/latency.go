package main

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// probe is one kind of request whose latency is measured.
type probe struct {
	name   string
	client *http.Client
	url    string
	want   int
	// prepare adds credentials before the clock starts: what is timed is
	// the round trip as the client sees it, not the client's own work.
	prepare func(*http.Request)
}

// once makes one GET and returns the time from sending it until its whole
// body has been read.
func (p probe) once() (time.Duration, error) {
	req, err := http.NewRequest(http.MethodGet, p.url, nil)
	if err != nil {
		return 0, err
	}
	p.prepare(req)
	start := time.Now()
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != p.want {
		return 0, fmt.Errorf("%s: status %d, want %d", p.name, resp.StatusCode, p.want)
	}
	return took, nil
}

// series is one probe's figures: per round, then the median over rounds.
// Diff is the median of the paired differences to the comparison's first
// probe (its baseline), per round.
type series struct {
	Name      string    `json:"name"`
	P50       []float64 `json:"p50_us"`
	P99       []float64 `json:"p99_us"`
	Diff      []float64 `json:"diff_p50_us,omitempty"`
	MedP50    float64   `json:"median_p50_us"`
	MedP99    float64   `json:"median_p99_us"`
	MedDiff   float64   `json:"median_diff_us,omitempty"`
	IsBaseRef bool      `json:"baseline,omitempty"`
}

type comparison struct {
	Name   string   `json:"name"`
	Series []series `json:"series"`
}

// compare measures the probes in rounds of n sequential requests each,
// after warm requests of each. Within a round the probes take turns
// request by request, and the one going first rotates, so that machine
// noise and any order effect hit every probe alike.
func compare(name string, probes []probe, n, warm, rounds int) (comparison, error) {
	c := comparison{Name: name, Series: make([]series, len(probes))}
	for k, p := range probes {
		c.Series[k] = series{Name: p.name, IsBaseRef: k == 0}
	}
	for range warm {
		for _, p := range probes {
			if _, err := p.once(); err != nil {
				return c, err
			}
		}
	}
	k := len(probes)
	for r := range rounds {
		took := make([][]time.Duration, k)
		for j := range took {
			took[j] = make([]time.Duration, n)
		}
		for i := range n {
			for j := range k {
				at := (i + j) % k
				d, err := probes[at].once()
				if err != nil {
					return c, err
				}
				took[at][i] = d
			}
		}
		for j := range k {
			s := &c.Series[j]
			s.P50 = append(s.P50, round1(percentile(took[j], 50)))
			s.P99 = append(s.P99, round1(percentile(took[j], 99)))
			if j > 0 {
				diff := make([]time.Duration, n)
				for i := range n {
					diff[i] = took[j][i] - took[0][i]
				}
				s.Diff = append(s.Diff, round1(percentile(diff, 50)))
			}
		}
		fmt.Printf("  round %d:", r+1)
		for j := range k {
			s := c.Series[j]
			fmt.Printf("  %s p50 %.1f p99 %.1f", s.Name, s.P50[r], s.P99[r])
			if j > 0 {
				fmt.Printf(" (%+.1f)", s.Diff[r])
			}
			fmt.Print(" µs;")
		}
		fmt.Println()
	}
	for j := range c.Series {
		s := &c.Series[j]
		s.MedP50, s.MedP99 = round1(median(s.P50)), round1(median(s.P99))
		if j > 0 {
			s.MedDiff = round1(median(s.Diff))
		}
	}
	return c, nil
}

func (c comparison) print() {
	fmt.Printf("%s, median of round figures:\n", c.Name)
	for j, s := range c.Series {
		fmt.Printf("  %-28s p50 %8.1f µs  p99 %8.1f µs", s.Name, s.MedP50, s.MedP99)
		if j > 0 {
			fmt.Printf("  added p50 %+7.1f µs (vs %s)", s.MedDiff, c.Series[0].Name)
		}
		fmt.Println()
	}
}
