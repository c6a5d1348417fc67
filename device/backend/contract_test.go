package backend

import (
	"os"
	"strings"
	"testing"

	"phonepilot/device"
	"phonepilot/device/devicetest"
	"phonepilot/internal/testlog"
)

// TestContractOnDevice runs the device contract on the phone a device name
// names, through the backend table, for a user to check a real phone:
//
//	PHONEPILOT_CONTRACT_DEVICE=adb:SERIAL go test ./device/backend -run TestContractOnDevice -v
//
// The phone should be unlocked, on its home screen, with its Settings app
// (which must have a search box). Vanish is skipped (a person unplugs a
// phone); PHONEPILOT_CONTRACT_CANNOT=TypeUnicode,… declares more skips (a
// phone without ADB Keyboard cannot type CJK or emoji). The adb server is
// $ADB_SERVER_SOCKET, else 127.0.0.1:5037.
func TestContractOnDevice(t *testing.T) {
	name := os.Getenv("PHONEPILOT_CONTRACT_DEVICE")
	if name == "" {
		t.Skip("set PHONEPILOT_CONTRACT_DEVICE to a device name (adb:SERIAL) to run the device contract on that phone")
	}
	cannot := map[string]string{devicetest.CheckVanish: "a real phone is unplugged by a person, not by a test"}
	for _, c := range strings.Split(os.Getenv("PHONEPILOT_CONTRACT_CANNOT"), ",") {
		if c = strings.TrimSpace(c); c != "" {
			cannot[c] = "declared by PHONEPILOT_CONTRACT_CANNOT"
		}
	}
	devicetest.Contract(t, devicetest.Target{
		Open: func(t *testing.T) device.Device {
			od, err := Open(t.Context(), name, Options{Logger: testlog.New(t)})
			if err != nil {
				t.Fatalf("open %s: %v", name, err)
			}
			t.Cleanup(func() { _ = od.Close() })
			if err := od.Device.Key(t.Context(), device.KeyHome); err != nil {
				t.Fatalf("%s: home: %v", name, err)
			}
			return od.Device
		},
		Cannot: cannot,
	})
}
