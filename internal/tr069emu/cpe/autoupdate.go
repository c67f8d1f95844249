package cpe

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"cpesuite/internal/tr069emu/tree"
)

// Updatable is one auto-update entry (the spec's Parameter): the value of
// Name changes on every update tick according to StepType.
type Updatable struct {
	Name     string   `json:"name"`
	Type     string   `json:"type,omitempty"`     // INT (default), BOOL, STRING
	StepType string   `json:"stepType,omitempty"` // RANDOM, INCREMENT, DECREMENT, DEFAULT (default)
	Min      int64    `json:"min"`
	Max      int64    `json:"max"`
	Step     int64    `json:"step"`
	Array    []string `json:"array,omitempty"`
}

// Normalize fills the defaults and checks the entry; the error names the
// field.
func (u *Updatable) Normalize() error {
	if strings.TrimSpace(u.Name) == "" {
		return fmt.Errorf("name is required")
	}
	if u.Type == "" {
		u.Type = "INT"
	}
	if u.StepType == "" {
		u.StepType = "DEFAULT"
	}
	if !slices.Contains([]string{"INT", "BOOL", "STRING"}, u.Type) {
		return fmt.Errorf("type %q of %s: must be INT, BOOL or STRING", u.Type, u.Name)
	}
	if !slices.Contains([]string{"RANDOM", "INCREMENT", "DECREMENT", "DEFAULT"}, u.StepType) {
		return fmt.Errorf("stepType %q of %s: must be RANDOM, INCREMENT, DECREMENT or DEFAULT", u.StepType, u.Name)
	}
	if u.Type == "INT" && len(u.Array) == 0 {
		if u.Min > u.Max {
			return fmt.Errorf("min %d of %s is greater than max %d", u.Min, u.Name, u.Max)
		}
		if u.Step < 0 {
			return fmt.Errorf("step of %s must not be negative", u.Name)
		}
	}
	if u.Type == "STRING" && len(u.Array) == 0 {
		return fmt.Errorf("STRING parameter %s needs an array of values", u.Name)
	}
	return nil
}

// Next returns the value after cur. With an array the value moves through
// it (RANDOM: any element, INCREMENT/DEFAULT: the next one, DECREMENT: the
// previous one, wrapping). INT moves by step within [min, max] (RANDOM:
// uniform, INCREMENT/DECREMENT wrap at the bounds, DEFAULT: a random walk of
// one step either way, clamped); BOOL toggles, or is random with RANDOM.
func (u Updatable) Next(cur string, rnd *rand.Rand) string {
	intn := func(n int) int {
		if rnd != nil {
			return rnd.IntN(n)
		}
		return rand.IntN(n)
	}
	if len(u.Array) > 0 {
		i := slices.Index(u.Array, cur)
		switch u.StepType {
		case "RANDOM":
			return u.Array[intn(len(u.Array))]
		case "DECREMENT":
			if i <= 0 {
				return u.Array[len(u.Array)-1]
			}
			return u.Array[i-1]
		default:
			return u.Array[(i+1)%len(u.Array)]
		}
	}
	switch u.Type {
	case "BOOL":
		if u.StepType == "RANDOM" {
			return strconv.FormatBool(intn(2) == 1)
		}
		b, _ := strconv.ParseBool(strings.TrimSpace(cur))
		if cur == "1" {
			b = true
		}
		return strconv.FormatBool(!b)
	case "STRING":
		return cur
	}
	n, err := strconv.ParseInt(strings.TrimSpace(cur), 10, 64)
	if err != nil {
		n = u.Min
	}
	step := max(u.Step, 1)
	span := u.Max - u.Min
	switch u.StepType {
	case "RANDOM":
		if span <= 0 {
			return strconv.FormatInt(u.Min, 10)
		}
		return strconv.FormatInt(u.Min+int64(intn(int(min(span+1, 1<<31-1)))), 10)
	case "INCREMENT":
		// Past either bound (a current value outside the range, or an
		// overflow) the value wraps to min, so it never leaves [min, max].
		n += step
		if n > u.Max || n < u.Min {
			n = u.Min
		}
	case "DECREMENT":
		n -= step
		if n < u.Min || n > u.Max {
			n = u.Max
		}
	default:
		if intn(2) == 0 {
			n -= step
		} else {
			n += step
		}
		n = min(max(n, u.Min), u.Max)
	}
	return strconv.FormatInt(n, 10)
}

// SetUpdatable replaces the device's auto-update list; it applies from the
// next tick.
func (d *Device) SetUpdatable(list []Updatable) {
	d.mu.Lock()
	d.updatable = slices.Clone(list)
	d.scheduleUpdateLocked()
	d.mu.Unlock()
}

// UpdatableList returns the device's auto-update list.
func (d *Device) UpdatableList() []Updatable {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.updatable)
}

func (d *Device) scheduleUpdateLocked() {
	if d.updateT != nil || len(d.updatable) == 0 || d.stopped || d.ctx == nil {
		return
	}
	every := d.opts.UpdateEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	var tick func()
	tick = func() {
		d.UpdateNow()
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.stopped || len(d.updatable) == 0 {
			d.updateT = nil
			return
		}
		d.updateT = time.AfterFunc(every, tick)
	}
	d.updateT = time.AfterFunc(every, tick)
}

// UpdateNow applies one auto-update step to every updatable parameter the
// tree has and returns the changes; notification follows as for any change
// made outside the ACS.
func (d *Device) UpdateNow() []tree.Change {
	d.mu.Lock()
	list := slices.Clone(d.updatable)
	t := d.tree
	d.mu.Unlock()
	var sets []tree.Set
	for _, u := range list {
		p, ok := t.Get(u.Name)
		if !ok || p.Object {
			continue
		}
		sets = append(sets, tree.Set{Name: u.Name, Value: u.Next(p.Value, nil)})
	}
	if len(sets) == 0 {
		return nil
	}
	changes, err := t.SetValues(sets, tree.SetOptions{})
	if err != nil {
		d.log.Warn("auto-update refused", "err", err)
		return nil
	}
	d.Notify(changes)
	return changes
}
