package backend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"phonepilot/device"
	"phonepilot/device/usbmux"
	"phonepilot/device/wda"
)

// wdaPort is the port WebDriverAgent listens on, on the phone.
const wdaPort = 8100

// udidName is what may follow "ios:": an iPhone's UDID (40 hex digits on
// older phones, 8-16 with a dash on newer ones), as usbmuxd lists it.
var udidName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)

// iosBackend is an iPhone attached by USB, reached through usbmuxd
// (device/usbmux) at WDA's port 8100 on the phone: what iproxy 8100 8100
// and wda:http://127.0.0.1:8100 do, without iproxy. usbmuxd is at
// $USBMUXD_SOCKET_ADDRESS, else /var/run/usbmuxd.
var iosBackend = &Backend{
	Kind: "ios",
	Forms: []Form{
		{"ios:UDID", "an iPhone on USB running WebDriverAgent, reached through usbmuxd at its port 8100 (docs/ios.md)"},
	},
	Check: func(name, rest string) error {
		if !udidName.MatchString(rest) {
			return errors.New(`give the iPhone's UDID after "ios:" (see phonepilot devices)`)
		}
		return nil
	},
	Open: func(ctx context.Context, name, udid string, _ Options) (*Opened, error) {
		d, closeFn, err := openIOS(ctx, udid)
		if err != nil {
			return nil, err // the caller names the device
		}
		return opened(name, "ios", d, closeFn), nil
	},
	List: func(ctx context.Context, _ Options) ([]Listed, error) {
		c, explicit, err := usbmuxClient()
		if err != nil {
			return nil, err
		}
		list, err := c.Devices(ctx)
		if errors.Is(err, usbmux.ErrNoDaemon) && !explicit {
			return nil, nil // no usbmuxd where it lives by default: no iPhones
		}
		if err != nil {
			return nil, err
		}
		out := make([]Listed, 0, len(list))
		for _, d := range list {
			out = append(out, Listed{Name: "ios:" + d.UDID, Kind: "ios", State: "device", Extra: map[string]string{"connection": d.ConnectionType}})
		}
		return out, nil
	},
	Labels: func(ctx context.Context, _ Options, l Listed, dev device.Device) map[string]string {
		out := map[string]string{"kind": "ios", "platform": "ios"}
		if dev == nil {
			d, closeFn, err := openIOS(ctx, strings.TrimPrefix(l.Name, "ios:"))
			if err != nil {
				return out
			}
			defer closeFn()
			dev = d
		}
		iosLabels(ctx, dev, out)
		return out
	},
}

// usbmuxClient is a client of the usbmuxd at $USBMUXD_SOCKET_ADDRESS, else
// at its default socket; explicit says the variable named it.
func usbmuxClient() (c *usbmux.Client, explicit bool, err error) {
	addr, err := usbmux.AddressFromEnv()
	if err != nil {
		return nil, false, err
	}
	return usbmux.New(addr), os.Getenv(usbmux.EnvAddress) != "", nil
}

// openIOS finds the iPhone udid through usbmuxd, checks that something
// listens on its port 8100, and opens WDA there over usbmux tunnels (one
// per HTTP connection, as iproxy makes one per TCP connection).
func openIOS(ctx context.Context, udid string) (*wda.Device, func() error, error) {
	c, _, err := usbmuxClient()
	if err != nil {
		return nil, nil, err
	}
	found, err := c.Find(ctx, udid)
	if err != nil {
		return nil, nil, err
	}
	probe, err := c.Connect(ctx, found.ID, wdaPort)
	if errors.Is(err, usbmux.ErrRefused) {
		return nil, nil, fmt.Errorf("nothing listens on the iPhone's port %d: start WebDriverAgent on it (docs/ios.md): %w", wdaPort, err)
	}
	if err != nil {
		return nil, nil, err
	}
	probe.Close()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			conn, err := c.Connect(ctx, found.ID, wdaPort)
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w: %w", err, device.ErrDisconnected)
			}
			return conn, err
		},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	// WDA listens on the phone's own loopback; the tunnel decides where
	// the request goes, the host only fills the Host header.
	d, err := wda.Open(ctx, fmt.Sprintf("http://localhost:%d", wdaPort), &http.Client{Transport: tr, Timeout: 60 * time.Second})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, nil, fmt.Errorf("WebDriverAgent on the iPhone's port %d (through usbmuxd at %s): %w", wdaPort, c.Address(), err)
	}
	return d, func() error {
		err := d.Close()
		tr.CloseIdleConnections()
		return err
	}, nil
}
