package cpe

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cpesuite/internal/cwmp"
	"cpesuite/internal/tr069emu/tree"
)

func TestUpdatableNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		u       Updatable
		wantErr string // substring; "" for success
	}{
		{"defaults", Updatable{Name: "X"}, ""},
		{"int bounds", Updatable{Name: "X", Type: "INT", StepType: "INCREMENT", Min: -5, Max: 5, Step: 2}, ""},
		{"int equal bounds", Updatable{Name: "X", Min: 3, Max: 3}, ""},
		{"int array ignores bounds", Updatable{Name: "X", Type: "INT", Min: 9, Max: 1, Step: -1, Array: []string{"1", "2"}}, ""},
		{"bool", Updatable{Name: "X", Type: "BOOL", StepType: "RANDOM", Min: 9, Max: 1}, ""},
		{"string with array", Updatable{Name: "X", Type: "STRING", StepType: "DECREMENT", Array: []string{"a"}}, ""},
		{"no name", Updatable{}, "name is required"},
		{"blank name", Updatable{Name: " \t"}, "name is required"},
		{"unknown type", Updatable{Name: "X", Type: "FLOAT"}, `type "FLOAT"`},
		{"type is case-sensitive", Updatable{Name: "X", Type: "int"}, `type "int"`},
		{"unknown step type", Updatable{Name: "X", StepType: "UP"}, `stepType "UP"`},
		{"step type is case-sensitive", Updatable{Name: "X", StepType: "random"}, `stepType "random"`},
		{"min above max", Updatable{Name: "X", Min: 5, Max: 1}, "min 5 of X is greater than max 1"},
		{"negative step", Updatable{Name: "X", Max: 10, Step: -1}, "step of X must not be negative"},
		{"string without array", Updatable{Name: "X", Type: "STRING"}, "needs an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.u
			err := u.Normalize()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Normalize: %v", err)
				}
				if tc.u.Type == "" && u.Type != "INT" || tc.u.StepType == "" && u.StepType != "DEFAULT" {
					t.Errorf("defaults not filled: %+v", u)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Normalize = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestUpdatableNext(t *testing.T) {
	t.Parallel()
	arr := []string{"a", "b", "c"}
	type step struct{ cur, want string }
	for _, typ := range []string{"INT", "BOOL", "STRING"} {
		for _, tc := range []struct {
			stepType string
			steps    []step
		}{
			{"INCREMENT", []step{{"a", "b"}, {"b", "c"}, {"c", "a"}, {"zzz", "a"}}},
			{"DEFAULT", []step{{"a", "b"}, {"c", "a"}, {"zzz", "a"}}},
			{"DECREMENT", []step{{"c", "b"}, {"b", "a"}, {"a", "c"}, {"zzz", "c"}}},
		} {
			t.Run(typ+"/array/"+tc.stepType, func(t *testing.T) {
				u := Updatable{Name: "X", Type: typ, StepType: tc.stepType, Array: arr, Min: 100, Max: 200}
				for _, s := range tc.steps {
					if got := u.Next(s.cur, nil); got != s.want {
						t.Errorf("Next(%q) = %q, want %q", s.cur, got, s.want)
					}
				}
			})
		}
		t.Run(typ+"/array/RANDOM", func(t *testing.T) {
			u := Updatable{Name: "X", Type: typ, StepType: "RANDOM", Array: arr}
			seen := map[string]bool{}
			rnd := rand.New(rand.NewPCG(7, 8))
			for range 300 {
				v := u.Next("a", rnd)
				if !slices.Contains(arr, v) {
					t.Fatalf("RANDOM gave %q outside the array", v)
				}
				seen[v] = true
				seen[u.Next("a", nil)] = true
			}
			if len(seen) != len(arr) {
				t.Errorf("RANDOM over 600 draws reached only %v", seen)
			}
		})
	}

	// INT within [0, 10], step 3.
	intTable := []struct {
		stepType string
		steps    []step
	}{
		{"INCREMENT", []step{{"0", "3"}, {"6", "9"}, {"9", "0"}, {"10", "0"}, {"junk", "3"}, {" 4 ", "7"},
			// Out of range: never leaves [min, max].
			{"-20", "0"}, {"100", "0"}, {strconv.FormatInt(1<<63-1, 10), "0"}}},
		{"DECREMENT", []step{{"10", "7"}, {"3", "0"}, {"2", "10"}, {"0", "10"}, {"junk", "10"},
			{"100", "10"}, {"-20", "10"}, {strconv.FormatInt(-1<<63, 10), "10"}}},
	}
	for _, tc := range intTable {
		t.Run("INT/"+tc.stepType, func(t *testing.T) {
			u := Updatable{Name: "X", Type: "INT", StepType: tc.stepType, Min: 0, Max: 10, Step: 3}
			for _, s := range tc.steps {
				if got := u.Next(s.cur, nil); got != s.want {
					t.Errorf("Next(%q) = %q, want %q", s.cur, got, s.want)
				}
			}
		})
	}
	t.Run("INT/step 0 means 1", func(t *testing.T) {
		u := Updatable{Name: "X", Type: "INT", StepType: "INCREMENT", Min: 0, Max: 10}
		if got := u.Next("4", nil); got != "5" {
			t.Errorf("Next(4) = %s, want 5", got)
		}
	})
	t.Run("INT/DEFAULT", func(t *testing.T) {
		u := Updatable{Name: "X", Type: "INT", StepType: "DEFAULT", Min: 0, Max: 10, Step: 3}
		rnd := rand.New(rand.NewPCG(1, 1))
		for _, tc := range []struct {
			cur  string
			want []string
		}{
			{"5", []string{"2", "8"}}, {"0", []string{"0", "3"}}, {"10", []string{"7", "10"}},
			{"1", []string{"0", "4"}}, {"50", []string{"10"}}, {"-50", []string{"0"}},
		} {
			seen := map[string]bool{}
			for range 200 {
				got := u.Next(tc.cur, rnd)
				if !slices.Contains(tc.want, got) {
					t.Fatalf("DEFAULT Next(%s) = %s, want one of %v", tc.cur, got, tc.want)
				}
				seen[got] = true
			}
			if len(seen) != len(tc.want) {
				t.Errorf("DEFAULT Next(%s) over 200 draws gave only %v", tc.cur, seen)
			}
		}
	})
	t.Run("INT/RANDOM", func(t *testing.T) {
		u := Updatable{Name: "X", Type: "INT", StepType: "RANDOM", Min: -3, Max: 3}
		rnd := rand.New(rand.NewPCG(3, 4))
		seen := map[int]bool{}
		for range 500 {
			n, err := strconv.Atoi(u.Next("0", rnd))
			if err != nil || n < -3 || n > 3 {
				t.Fatalf("RANDOM gave %d (%v) outside [-3, 3]", n, err)
			}
			seen[n] = true
		}
		if len(seen) != 7 {
			t.Errorf("RANDOM over 500 draws reached %d of 7 values (bounds included)", len(seen))
		}
		one := Updatable{Name: "X", Type: "INT", StepType: "RANDOM", Min: 4, Max: 4}
		if got := one.Next("0", nil); got != "4" {
			t.Errorf("RANDOM over [4, 4] = %s", got)
		}
	})
	t.Run("BOOL", func(t *testing.T) {
		for _, st := range []string{"INCREMENT", "DECREMENT", "DEFAULT"} {
			u := Updatable{Name: "X", Type: "BOOL", StepType: st}
			for cur, want := range map[string]string{"true": "false", "false": "true", "1": "false", "0": "true", "junk": "true", "TRUE": "false"} {
				if got := u.Next(cur, nil); got != want {
					t.Errorf("%s Next(%q) = %q, want %q", st, cur, got, want)
				}
			}
		}
		u := Updatable{Name: "X", Type: "BOOL", StepType: "RANDOM"}
		rnd := rand.New(rand.NewPCG(5, 6))
		seen := map[string]bool{}
		for range 100 {
			seen[u.Next("true", rnd)] = true
		}
		if !seen["true"] || !seen["false"] || len(seen) != 2 {
			t.Errorf("BOOL RANDOM gave %v", seen)
		}
	})
	t.Run("STRING without array keeps the value", func(t *testing.T) {
		for _, st := range []string{"RANDOM", "INCREMENT", "DECREMENT", "DEFAULT"} {
			u := Updatable{Name: "X", Type: "STRING", StepType: st}
			if got := u.Next("same", nil); got != "same" {
				t.Errorf("%s: %q", st, got)
			}
		}
	})
}

func TestUpdateNowNotifies(t *testing.T) {
	t.Parallel()
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			a, d := rpcDevice(t, m.name, Settings{})
			r := m.root
			active := r + "DeviceInfo.ProcessStatus.CPUUsage"
			if m.name == tree.TR098 {
				active = r + "LANDevice.1.LANEthernetInterfaceConfig.1.Stats.BytesSent"
			}
			quiet := r + "Time.Enable"
			if err := d.Tree().SetNotification(active, 2); err != nil {
				t.Fatal(err)
			}
			before := paramValue(t, d, active)
			d.SetUpdatable([]Updatable{
				{Name: active, Type: "INT", StepType: "INCREMENT", Min: 0, Max: 1000, Step: 5},
				{Name: quiet, Type: "BOOL"},
				{Name: r + "NoSuch.Param", Type: "INT", Max: 5},
				{Name: r + "DeviceInfo.", Type: "INT", Max: 5},
			})
			if got := d.UpdatableList(); len(got) != 4 || got[0].Name != active {
				t.Fatalf("UpdatableList %+v", got)
			}
			from := len(a.all(d.Serial()))
			changes := d.UpdateNow()
			b, _ := strconv.Atoi(before)
			want := map[string]string{active: strconv.Itoa(b + 5), quiet: "false"}
			if len(changes) != 2 {
				t.Fatalf("changes %+v, want %v", changes, want)
			}
			for _, c := range changes {
				if want[c.Name] != c.Value || paramValue(t, d, c.Name) != c.Value {
					t.Errorf("change %+v, want %v", c, want)
				}
			}
			inf, _ := a.waitInform(t, d.Serial(), from, cwmp.EventValueChange, "")
			if v, ok := informParam(inf, active); !ok || v != want[active] {
				t.Errorf("VALUE CHANGE Inform: %s = %q (present %v), want %s", active, v, ok, want[active])
			}
			if _, ok := informParam(inf, quiet); ok {
				t.Errorf("%s informed though its notification is off", quiet)
			}
		})
	}
}

// A value outside [min, max] (the tree's own, or an operator's edit) must
// not make INCREMENT/DECREMENT produce values outside the range.
func TestUpdateNowFromOutOfRangeValue(t *testing.T) {
	t.Parallel()
	_, d := rpcDevice(t, tree.TR181, Settings{})
	const cpu, mem = "Device.DeviceInfo.ProcessStatus.CPUUsage", "Device.DeviceInfo.MemoryStatus.Free"
	if v := paramValue(t, d, cpu); v != "3" {
		t.Fatalf("base CPUUsage %s", v)
	}
	if v := paramValue(t, d, mem); v != "262144" {
		t.Fatalf("base MemoryStatus.Free %s", v)
	}
	d.SetUpdatable([]Updatable{
		{Name: cpu, Type: "INT", StepType: "INCREMENT", Min: 10, Max: 90, Step: 5},
		{Name: mem, Type: "INT", StepType: "DECREMENT", Min: 1000, Max: 2000, Step: 100},
	})
	if changes := d.UpdateNow(); len(changes) != 2 {
		t.Fatalf("changes %+v, want both parameters", changes)
	}
	if v := paramValue(t, d, cpu); v != "10" {
		t.Errorf("CPUUsage %s after INCREMENT from 3 in [10, 90], want 10", v)
	}
	if v := paramValue(t, d, mem); v != "2000" {
		t.Errorf("MemoryStatus.Free %s after DECREMENT from 262144 in [1000, 2000], want 2000", v)
	}
}

func TestAutoUpdateTicks(t *testing.T) {
	t.Parallel()
	a := newDouble(t)
	const name = "Device.DeviceInfo.MemoryStatus.Free"
	d := newDevice(t, newEnv(t, Settings{}), tree.TR181, a.url("EMUTICK"), Options{Serial: "EMUTICK", WithoutInitialInform: true, PeriodicDisabled: true,
		UpdateEvery: 10 * time.Millisecond, Updatable: []Updatable{{Name: name, Type: "INT", StepType: "INCREMENT", Min: 0, Max: 1 << 30, Step: 1}}})
	start, _ := strconv.Atoi(paramValue(t, d, name))
	d.mu.Lock()
	armed := d.updateT != nil
	d.mu.Unlock()
	if armed {
		t.Fatal("auto-update armed before Start")
	}
	d.Start(t.Context())
	eventually(t, "three auto-updates", func() bool {
		n, _ := strconv.Atoi(paramValue(t, d, name))
		return n >= start+3
	})
	// An empty list stops the ticks.
	d.SetUpdatable(nil)
	eventually(t, "ticks to stop", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.updateT == nil
	})
	// Passive or no notification: no session came of it.
	if n := len(a.all("EMUTICK")); n != 0 {
		t.Errorf("%d posts from auto-updates of a parameter without notification", n)
	}
}
