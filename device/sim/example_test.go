package sim_test

import (
	"context"
	"fmt"
	"os"

	"phonepilot/device/sim"
)

// A phone answers shell commands as `adb shell` would deliver them.
func ExamplePhone_Exec() {
	p, err := sim.New(sim.Config{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	p.Exec(ctx, "wm size", false, os.Stdout, os.Stderr)
	p.Exec(ctx, "monkey -p com.taobao.taobao -c android.intent.category.LAUNCHER 1 > /dev/null", false, os.Stdout, os.Stderr)
	p.Exec(ctx, "dumpsys window | grep mCurrentFocus", false, os.Stdout, os.Stderr)
	rc := p.Exec(ctx, "nosuchcommand", false, os.Stdout, os.Stdout)
	fmt.Println("exit", rc)
	// Output:
	// Physical size: 1080x2400
	//   mCurrentFocus=Window{27b3ffa u0 com.taobao.taobao/com.taobao.tao.TBMainActivity}
	// /system/bin/sh: nosuchcommand: not found
	// exit 127
}

// The in-process Device drives the same phone; the state JSON says what
// happened.
func ExamplePhone_Device() {
	p, _ := sim.New(sim.Config{Locale: "zh"})
	d := p.Device()
	ctx := context.Background()
	if err := d.LaunchApp(ctx, "设置"); err != nil {
		panic(err)
	}
	sc, _ := d.Scene(ctx)
	fmt.Println(sc.Package, sc.Width, sc.Height)
	// Output:
	// com.android.settings 1080 2400
}
