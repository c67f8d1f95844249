package testcase

import "unicode/utf8"

const (
	previewSteps = 3
	previewRunes = 120
)

// Summarize gives the list row of a case stored in file. steps_preview holds
// the actions of the first three steps, each cut to 120 characters (the
// last being "…" when cut). Lists are never nil, so they encode as [].
func Summarize(file string, c *Case) Summary {
	preview := make([]string, 0, min(len(c.Steps), previewSteps))
	for _, s := range c.Steps[:min(len(c.Steps), previewSteps)] {
		preview = append(preview, truncate(s.Action, previewRunes))
	}
	return Summary{
		File:         file,
		ID:           c.ID,
		Title:        c.Title,
		Portal:       c.Portal,
		BaseURL:      c.BaseURL,
		StepCount:    len(c.Steps),
		StepsPreview: preview,
		Project:      c.Project,
		Section:      c.Section,
		Priority:     c.Priority,
		Type:         c.Type,
		References:   c.References,
		Tags:         append([]string{}, c.Tags...),
	}
}

// truncate cuts s to at most n runes, ending it with "…" when it was cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// clone copies the lists of s, so a summary handed out cannot change the
// store's index.
func (s Summary) clone() Summary {
	s.StepsPreview = append([]string{}, s.StepsPreview...)
	s.Tags = append([]string{}, s.Tags...)
	return s
}
