package testcase

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummarize(t *testing.T) {
	long := strings.Repeat("ä", 130)
	c := &Case{
		ID: "a", Title: "t", Portal: "p", BaseURL: "http://x", Project: "P", Section: "S",
		Priority: "High", Type: "Smoke", References: "R-1", Tags: []string{"x"},
		Steps: []Step{{Action: long}, {Action: strings.Repeat("b", 120)}, {Action: "three"}, {Action: "four"}},
	}
	s := Summarize("a.yaml", c)
	if s.File != "a.yaml" || s.ID != "a" || s.Title != "t" || s.Portal != "p" || s.BaseURL != "http://x" ||
		s.Project != "P" || s.Section != "S" || s.Priority != "High" || s.Type != "Smoke" || s.References != "R-1" ||
		s.StepCount != 4 || len(s.Tags) != 1 {
		t.Fatalf("Summarize = %+v", s)
	}
	if len(s.StepsPreview) != 3 {
		t.Fatalf("preview has %d steps, want 3", len(s.StepsPreview))
	}
	if p := s.StepsPreview[0]; utf8.RuneCountInString(p) != 120 || !strings.HasSuffix(p, "…") || !strings.HasPrefix(long, strings.TrimSuffix(p, "…")) {
		t.Fatalf("a 130-rune action must be cut to 120 runes ending in …, got %d runes %q", utf8.RuneCountInString(p), p)
	}
	if s.StepsPreview[1] != strings.Repeat("b", 120) || s.StepsPreview[2] != "three" {
		t.Fatalf("actions of up to 120 runes stay whole: %q", s.StepsPreview[1:])
	}
	c.Tags[0] = "changed"
	if s.Tags[0] != "x" {
		t.Fatal("the summary must not share the case's tags")
	}
}

func TestSummarizeEncodesEmptyListsAsArrays(t *testing.T) {
	b, err := json.Marshal(Summarize("a.yaml", &Case{ID: "a"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"steps_preview":[]`) || !strings.Contains(string(b), `"tags":[]`) {
		t.Fatalf("JSON = %s, want [] for empty lists", b)
	}
}
