package device

// ObserverState says how a phone's screen is read and driven right now
// ("helper": phonepilot's helper on the phone; "uiautomator": one
// `uiautomator dump` and one `input` process per call) and, after a
// switch, why.
type ObserverState struct {
	Name string `json:"name"`
	// Reason is why the phone is not on the observer asked for (empty when it is).
	Reason string `json:"reason,omitempty"`
	// Switches counts the switches so far (a caller that saw fewer reports one).
	Switches int `json:"switches,omitempty"`
}

// ObserverReporter is a device that can say how it observes the screen
// (device/adb). Optional: found by type assertion.
type ObserverReporter interface {
	Observer() ObserverState
}
