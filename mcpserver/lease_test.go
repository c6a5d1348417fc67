package mcpserver_test

import (
	"errors"
	"testing"
	"time"

	"phonepilot/internal/clock"
	"phonepilot/mcpserver"
)

// Every rule of the lease table and its opposite, one row each: inverting
// any rule (or counting idle time from the wrong moment) fails a row.
func TestLeaseRules(t *testing.T) {
	const idle = 5 * time.Minute
	type env struct {
		l   *mcpserver.Leases
		clk *clock.Fake
	}
	busy := func(err error) bool { return errors.Is(err, mcpserver.ErrBusy) }
	for _, c := range []struct {
		rule string
		do   func(e env) (bool, string)
	}{
		{"a device nobody holds is leased to the first asker", func(e env) (bool, string) {
			err := e.l.Acquire("d", "a", "")
			return err == nil, errString(err)
		}},
		{"another holder's lease used within the idle time makes the device busy", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "client-a")
			e.clk.Advance(idle - time.Second)
			err := e.l.Acquire("d", "b", "")
			var be *mcpserver.BusyError
			return errors.As(err, &be) && be.Holder == "a" && be.Label == "client-a" && be.Left == time.Second, errString(err)
		}},
		{"a lease unused for the idle time is taken over", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			e.clk.Advance(idle)
			err := e.l.Acquire("d", "b", "")
			h, _ := e.l.Holder("d")
			return err == nil && h == "b", errString(err) + " holder " + h
		}},
		{"idle time counts from the last use, not from the lease's start", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			e.clk.Advance(4 * time.Minute)
			_ = e.l.Acquire("d", "a", "") // used again
			e.clk.Advance(4 * time.Minute)
			err := e.l.Acquire("d", "b", "")
			return busy(err), errString(err)
		}},
		{"the holder renews its own lease", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			e.clk.Advance(time.Hour)
			err := e.l.Acquire("d", "a", "")
			return err == nil, errString(err)
		}},
		{"a lease held by a running task never idles out", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			e.l.Hold("d", "a", "t1")
			e.clk.Advance(24 * time.Hour)
			err := e.l.Acquire("d", "b", "")
			var be *mcpserver.BusyError
			return errors.As(err, &be) && be.Task == "t1", errString(err)
		}},
		{"when the hold ends, the idle time counts from its end", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			end := e.l.Hold("d", "a", "t1")
			e.clk.Advance(time.Hour)
			end()
			e.clk.Advance(idle - time.Second)
			if err := e.l.Acquire("d", "b", ""); !busy(err) {
				return false, "just after the hold ended: " + errString(err)
			}
			e.clk.Advance(time.Second)
			err := e.l.Acquire("d", "b", "")
			return err == nil, "idle after the hold: " + errString(err)
		}},
		{"Running names the holder's task on the device, nobody else's", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			e.l.Hold("d", "a", "t1")
			return e.l.Running("d", "a") == "t1" && e.l.Running("d", "b") == "" && e.l.Running("other", "a") == "", e.l.Running("d", "a")
		}},
		{"ReleaseAll ends the holder's idle leases", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			_ = e.l.Acquire("e", "b", "")
			e.l.ReleaseAll("a")
			h, _ := e.l.Holder("d")
			hb, _ := e.l.Holder("e")
			return h == "" && hb == "b" && e.l.Acquire("d", "c", "") == nil, "d held by " + h + ", e by " + hb
		}},
		{"ReleaseAll keeps a lease whose task still runs (it waits for a person)", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			e.l.Hold("d", "a", "t1")
			e.l.ReleaseAll("a")
			h, _ := e.l.Holder("d")
			err := e.l.Acquire("d", "b", "")
			return h == "a" && busy(err), "holder " + h + "; " + errString(err)
		}},
		{"a live lease keeps another task off the device", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			return e.l.HeldAgainst("d", "other-task"), ""
		}},
		{"a lease does not keep its own task off the device", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			e.l.Hold("d", "a", "mine")
			return !e.l.HeldAgainst("d", "mine") && e.l.HeldAgainst("d", "other"), ""
		}},
		{"an idle lease, or none, keeps no task off", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "")
			e.clk.Advance(idle)
			return !e.l.HeldAgainst("d", "t") && !e.l.HeldAgainst("free", "t"), ""
		}},
		{"Holder names a live lease's holder and label, and nobody for an idle one", func(e env) (bool, string) {
			_ = e.l.Acquire("d", "a", "client-a")
			h, lb := e.l.Holder("d")
			if h != "a" || lb != "client-a" {
				return false, "live: " + h + " " + lb
			}
			e.clk.Advance(idle)
			h, _ = e.l.Holder("d")
			return h == "", "idle: " + h
		}},
	} {
		t.Run(c.rule, func(t *testing.T) {
			clk := clock.NewFake(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			if ok, got := c.do(env{mcpserver.NewLeases(clk, idle), clk}); !ok {
				t.Errorf("broken: %s", got)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
