package tools_test

import (
	"context"
	"fmt"

	"phonepilot/device/fake"
	"phonepilot/scene"
	"phonepilot/tools"
)

// A model's tool call, validated and run against the Scene it was chosen
// from: the element index becomes the centre of that element's bounds.
func ExampleRun() {
	sc := &scene.Scene{Width: 1080, Height: 2400, Elements: []scene.Element{
		{Index: 0, Class: "android.widget.FrameLayout", Bounds: scene.Bounds{Right: 1080, Bottom: 2400}},
		{Index: 1, Class: "android.widget.Button", Text: "Search", Bounds: scene.Bounds{Left: 900, Top: 200, Right: 1080, Bottom: 300}},
	}}
	dev := fake.New(sc)

	res, err := tools.Run(context.Background(), dev, sc, tools.NewCall(tools.Tap, map[string]int{"element": 1}), tools.RunOptions{})
	fmt.Println(res.Text, err, dev.Calls())

	_, err = tools.Run(context.Background(), dev, sc, tools.NewCall(tools.Tap, map[string]int{"element": 57}), tools.RunOptions{})
	fmt.Println(err)

	err = tools.Validate(tools.NewCall(tools.Scroll, map[string]string{"direction": "sideways"}))
	fmt.Println(err)
	// Output:
	// tapped [1] Button "Search" <nil> [Tap(990,250)]
	// no element 57; valid 0..1
	// scroll: argument "direction": must be one of up, down, left, right
}
