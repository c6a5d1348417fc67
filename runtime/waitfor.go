package runtime

import (
	"context"

	"phonepilot/scene"
)

// waitFor polls the Scene until sel resolves or WaitTimeout passes. It
// returns the element, the Scene it resolved in (the latest one read when
// it did not), and whether it resolved.
func (e *executor) waitFor(ctx context.Context, sel scene.Selector, sc *scene.Scene) (scene.Element, *scene.Scene, bool, error) {
	if el, ok := sc.Resolve(sel); ok { // there already: no poll to set up
		return el, sc, true, nil
	}
	deadline := e.clock.Now().Add(e.cfg.WaitTimeout)
	var found scene.Element
	sc, ok, err := e.watchScreen(ctx, sc, func(s *scene.Scene) bool {
		el, ok := s.Resolve(sel)
		found = el
		return ok
	}, func() bool { return !e.clock.Now().Before(deadline) })
	if !ok {
		found = scene.Element{}
	}
	return found, sc, ok, err
}
