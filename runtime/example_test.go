package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"phonepilot/device/sim"
	"phonepilot/internal/clock"
	"phonepilot/lifecycle"
	"phonepilot/plan/rule"
	"phonepilot/runtime"
)

// A task on the in-process simulated phone with the default rule Planner.
// The fake clock lets the example run without real waits.
func ExampleRunner_Run() {
	clk := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	phone, err := sim.New(sim.Config{Locale: "en", Seed: 1, Clock: clk})
	if err != nil {
		panic(err)
	}
	runner, err := runtime.New(runtime.Defaults(), phone.Device(), rule.New(), runtime.Options{
		Clock: clk,
		OnEvent: func(e runtime.Event) {
			if e.Type == lifecycle.EventStepFinished {
				fmt.Printf("%d %s: %s\n", e.Step, e.Intent, e.Record.Status)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	res := runner.Run(context.Background(), "open Taobao and search Mac mini")
	state, _ := phone.State()
	var st struct {
		Taobao struct {
			LastSearch string `json:"last_search"`
		} `json:"taobao"`
	}
	_ = json.Unmarshal(state, &st)
	fmt.Println(res.Status, "-", st.Taobao.LastSearch)
	// Output:
	// 1 launch Taobao: succeeded
	// 2 dismiss the popup (Close): succeeded
	// 3 tap the search box: succeeded
	// 4 type "Mac mini" and submit: succeeded
	// completed - Mac mini
}
