package phonebench

import (
	"context"
	"fmt"

	"phonepilot/device"
	"phonepilot/device/sim"
	"phonepilot/device/sim/simwda"
	"phonepilot/device/wda"
	"phonepilot/phonebench/tasks"
)

// The platforms phonebench runs its tasks on: the simulated Android phone,
// or the same phone dressed as an iPhone and driven through WebDriverAgent's
// API by phonepilot's WDA client (in process, on the run's clock: every
// /source costs what a real iPhone's does, docs/ios.md).
const (
	PlatformAndroid = "android"
	PlatformIOS     = "ios"
)

// Platforms lists them.
var Platforms = []string{PlatformAndroid, PlatformIOS}

// iosPolicies are the policies that run on the iPhone: phonepilot's own
// and the plain peer loop (one /source, decide, act, sleep). The other
// peers' loops are built from their Android paths (a Portal service,
// screencap, uiautomator2), which an iPhone does not have.
var iosPolicies = map[string]bool{PolicyRule: true, PolicyReference: true, PolicyAI: true, PolicyPeerLoop: true}

// iosDevice drives p as an iPhone through the WDA client.
func iosDevice(ctx context.Context, p *sim.Phone) (device.Device, error) {
	d, err := wda.Open(ctx, simwda.InProcessURL, simwda.InProcessClient(simwda.New(p)))
	if err != nil {
		return nil, fmt.Errorf("the simulated iPhone: %w", err)
	}
	return d, nil
}

// iosScript is a task's script on an iPhone: BACK, which an iPhone does not
// have, is a tap on the screen's navigation-bar Back button.
func iosScript(steps []tasks.Step, locale string) []tasks.Step {
	out := make([]tasks.Step, len(steps))
	for i, st := range steps {
		if st.Tool == tasks.ToolPressKey && st.Args["key"] == "back" {
			st = tasks.Step{Intent: st.Intent, Tool: tasks.ToolTap, Target: map[string]string{"en": "Back", "zh": "返回"}[locale]}
		}
		out[i] = st
	}
	return out
}
