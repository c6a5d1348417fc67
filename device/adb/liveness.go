package adb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"phonepilot/device"
)

// A phone can stop answering with its connection open (frozen, or its adbd
// stopped): the adb server still lists it as "device" and forwards our
// requests, and nothing comes back. Deadlines alone cannot tell that phone
// from one running a slow command, and the caller's retries multiply them
// (228 s before a task failed). So every call is watched: once it has
// waited Timeouts.Stall, the phone is sent a trivial command on a stream of
// its own; a phone that answers is busy and the call goes on (checked again
// every Stall), one that does not answer within Timeouts.Probe has stopped
// answering, and the call ends with a *StoppedError, which is
// device.ErrDisconnected. Until the phone answers a check again, later
// calls end the same way without waiting out their deadlines.
//
// The watch runs on the wall clock, not the injected one: it races network
// I/O, whose deadlines are wall-clock too.

// StoppedError: the phone is still attached but stopped answering. It
// matches device.ErrDisconnected.
type StoppedError struct {
	Serial string
	// Cmd is the command that got no reply.
	Cmd string
	// Waited is how long it went unanswered.
	Waited time.Duration
	// Check is how long the check (a trivial command) went unanswered.
	Check time.Duration
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("the phone stopped answering: no reply to `%s` within %s, nor to a check within %s (adb still lists %s as attached)",
		e.Cmd, roundDuration(e.Waited), roundDuration(e.Check), e.Serial)
}

func (e *StoppedError) Unwrap() error { return device.ErrDisconnected }

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// errNoAnswer is a check that got no reply from a phone the server lists.
var errNoAnswer = errors.New("no answer")

// liveness remembers that the phone stopped answering.
type liveness struct {
	mu      sync.Mutex
	stopped *StoppedError // nil while the phone answers
	checked time.Time     // when the last check got no answer
}

// probeCommand is what a check runs: a shell builtin every phone has.
const probeCommand = "echo"

// probe sends the phone a trivial command. It returns nil when the phone
// answers (whatever the answer) or ctx ends, errNoAnswer when the server
// lists the phone as ready but the phone is silent for Timeouts.Probe, and
// an error wrapping device.ErrDisconnected when the phone or the server is
// gone.
func (d *Device) probe(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, d.cfg.Timeouts.Probe)
	defer cancel()
	_, err := d.client.Exec(pctx, d.serial, probeCommand)
	switch {
	case err == nil || ctx.Err() != nil:
		return nil
	case errors.Is(err, device.ErrDisconnected) || errors.Is(err, ErrServerUnavailable):
		return fmt.Errorf("%w: %w", device.ErrDisconnected, err)
	case errors.Is(err, context.DeadlineExceeded):
		if gone, why := d.gone(ctx); gone {
			return fmt.Errorf("%w (%s)", device.ErrDisconnected, why)
		}
		return errNoAnswer
	case isConnectionLoss(err):
		if gone, why := d.gone(ctx); gone {
			return fmt.Errorf("%w (%s)", device.ErrDisconnected, why)
		}
	}
	// A refusal or an error message is an answer too.
	return nil
}

// checkStopped fails a new call at once while the phone is known to have
// stopped answering, asking it again at most every Timeouts.Probe; a phone
// that answers is cleared.
func (d *Device) checkStopped(ctx context.Context, op string) error {
	d.live.mu.Lock()
	stopped, checked := d.live.stopped, d.live.checked
	d.live.mu.Unlock()
	if stopped == nil {
		return nil
	}
	if time.Since(checked) >= d.cfg.Timeouts.Probe {
		err := d.probe(ctx)
		if err == nil {
			if ctx.Err() != nil {
				return fmt.Errorf("adb %s: %w", op, ctx.Err())
			}
			d.answered()
			return nil
		}
		d.live.mu.Lock()
		d.live.checked = time.Now()
		d.live.mu.Unlock()
		if !errors.Is(err, errNoAnswer) {
			return fmt.Errorf("adb %s: %w", op, err)
		}
	}
	return fmt.Errorf("adb %s: %w", op, stopped)
}

// markStopped records that the phone stopped answering.
func (d *Device) markStopped(e *StoppedError) {
	d.live.mu.Lock()
	first := d.live.stopped == nil
	d.live.stopped, d.live.checked = e, time.Now()
	d.live.mu.Unlock()
	if first {
		d.log.Warn("the phone stopped answering", "cmd", e.Cmd, "waited", e.Waited)
	}
}

// answered clears a stop once the phone answers again.
func (d *Device) answered() {
	d.live.mu.Lock()
	was := d.live.stopped != nil
	d.live.stopped = nil
	d.live.mu.Unlock()
	if was {
		d.log.Info("the phone answers again")
	}
}

// watch checks the phone every Timeouts.Stall while a call is in flight
// (until ctx ends), and cancels the call with the reason when the phone is
// silent or gone.
func (d *Device) watch(ctx context.Context, cmd string, start time.Time, cancel context.CancelCauseFunc) {
	t := time.NewTimer(d.cfg.Timeouts.Stall)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		checkStart := time.Now()
		err := d.probe(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errNoAnswer):
			e := &StoppedError{Serial: d.serial, Cmd: cmd, Waited: time.Since(start), Check: time.Since(checkStart)}
			d.markStopped(e)
			cancel(e)
			return
		case err != nil:
			cancel(err)
			return
		}
		t.Reset(d.cfg.Timeouts.Stall)
	}
}

// errCallDone ends a call's watch.
var errCallDone = errors.New("call done")

// call runs do with ctx bounded by timeout, watching the phone meanwhile
// (see watch). op names the call in errors ("shell wm size"), cmd is the
// command as the user would recognise it.
func (d *Device) call(ctx context.Context, timeout time.Duration, op, cmd string, do func(context.Context) error) error {
	if err := d.checkStopped(ctx, op); err != nil {
		return err
	}
	start := time.Now()
	wctx, cancel := context.WithCancelCause(ctx)
	cctx, cancelTimeout := opCtx(wctx, timeout)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		d.watch(wctx, cmd, start, cancel)
	}()
	err := do(cctx)
	cause := context.Cause(wctx)
	cancelTimeout()
	cancel(errCallDone)
	<-watched

	switch {
	case err == nil:
		d.answered()
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("adb %s: %w", op, ctx.Err())
	case cause != nil:
		// The watch found the phone silent or gone.
		return fmt.Errorf("adb %s: %w", op, cause)
	case errors.Is(err, context.DeadlineExceeded) && cctx.Err() != nil:
		// Our own deadline passed before the watch decided: ask the phone
		// now whether it is slow or silent.
		checkStart := time.Now()
		switch perr := d.probe(ctx); {
		case errors.Is(perr, errNoAnswer):
			e := &StoppedError{Serial: d.serial, Cmd: cmd, Waited: time.Since(start), Check: time.Since(checkStart)}
			d.markStopped(e)
			return fmt.Errorf("adb %s: %w", op, e)
		case perr != nil:
			return fmt.Errorf("adb %s: %w: %v", op, perr, err)
		}
		return fmt.Errorf("adb %s: the phone answers, but `%s` did not finish within %s: %w", op, cmd, roundDuration(timeout), err)
	}
	return d.classify(ctx, op, err)
}
