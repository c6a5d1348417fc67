// Package simusbmux plays usbmuxd for simulated iPhones: it lists them
// (ListDevices, Listen) and tunnels a Connect to a port a device serves
// (WebDriverAgent's 8100 on the simulated iPhone), with usbmuxd's own
// answers when the device or the port is not there. `phonepilot sim
// --usbmuxd PATH` serves it on a unix socket, so that `ios:UDID` device
// names, iproxy and appium-ios-device reach the simulator as they reach a
// phone on a USB cable.
package simusbmux

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"howett.net/plist"

	"phonepilot/device/usbmux"
)

// Device is one simulated device on the bus.
type Device struct {
	UDID string
	// ProductID is the USB product id usbmuxd reports (0x12a8: an iPhone).
	ProductID int
	// Ports are the device's listening ports: a Connect to one hands the
	// tunnel's connection to its function, which owns it. A Connect to any
	// other port is refused, as a phone without WDA running refuses 8100.
	Ports map[int]func(net.Conn)
}

// iPhoneProductID is the USB product id iPhones report (Apple's 0x12a8).
const iPhoneProductID = 0x12a8

// Server answers usbmuxd's plist protocol for its devices.
type Server struct {
	devices []Device
	log     *slog.Logger

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// New serves devices; their DeviceIDs are their positions from 1. log
// may be nil.
func New(devices []Device, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for i := range devices {
		if devices[i].ProductID == 0 {
			devices[i].ProductID = iPhoneProductID
		}
	}
	return &Server{devices: devices, log: log, conns: map[net.Conn]bool{}}
}

// Serve accepts connections on ln until ctx ends or ln is closed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if !s.track(conn, true) {
			conn.Close()
			return nil
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if handed := s.serveConn(conn); !handed {
				conn.Close()
			}
			s.track(conn, false)
		}()
	}
}

// Close ends every connection still speaking usbmuxd's protocol (tunnels
// belong to their ports) and waits for them.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.closed {
			return false
		}
		s.conns[c] = true
	} else {
		delete(s.conns, c)
	}
	return true
}

// serveConn answers one client's messages; handed says the connection
// became a tunnel (a port owns it now).
func (s *Server) serveConn(conn net.Conn) (handed bool) {
	for {
		tag, body, err := usbmux.ReadMessage(conn)
		if err != nil {
			var ve *usbmux.VersionError
			if errors.As(err, &ve) {
				s.log.Debug("usbmux: a client in a protocol not spoken here", "err", err)
				_ = s.result(conn, tag, usbmux.ResultBadVersion)
			} else if !errors.Is(err, io.EOF) {
				s.log.Debug("usbmux: reading a message", "err", err)
			}
			return false
		}
		var msg struct {
			MessageType string
			DeviceID    int
			PortNumber  int
		}
		if _, err := plist.Unmarshal(body, &msg); err != nil {
			s.log.Debug("usbmux: not a plist", "err", err)
			return false
		}
		s.log.Debug("usbmux", "message", msg.MessageType, "device", msg.DeviceID)
		switch msg.MessageType {
		case "ListDevices":
			list := make([]any, len(s.devices))
			for i := range s.devices {
				list[i] = s.attached(i)
			}
			err = usbmux.WriteMessage(conn, tag, map[string]any{"DeviceList": list})
		case "Listen":
			// Attached for each device now, then nothing: no device comes
			// or goes until the client hangs up.
			if err = s.result(conn, tag, usbmux.ResultOK); err == nil {
				for i := range s.devices {
					if err = usbmux.WriteMessage(conn, 0, s.attached(i)); err != nil {
						break
					}
				}
			}
			if err == nil {
				_, _ = io.Copy(io.Discard, conn)
				return false
			}
		case "ReadBUID":
			err = usbmux.WriteMessage(conn, tag, map[string]any{"BUID": "00000000-0000-0000-0000-50484F4E4550"})
		case "Connect":
			if msg.DeviceID < 1 || msg.DeviceID > len(s.devices) {
				err = s.result(conn, tag, usbmux.ResultBadDevice)
				break
			}
			port := msg.PortNumber>>8&0xff | (msg.PortNumber&0xff)<<8
			serve := s.devices[msg.DeviceID-1].Ports[port]
			if serve == nil {
				err = s.result(conn, tag, usbmux.ResultRefused)
				break
			}
			if err = s.result(conn, tag, usbmux.ResultOK); err != nil {
				return false
			}
			s.track(conn, false)
			serve(conn)
			return true
		default:
			err = s.result(conn, tag, usbmux.ResultBadCommand)
		}
		if err != nil {
			return false
		}
	}
}

// attached is device i as ListDevices and Listen describe it.
func (s *Server) attached(i int) map[string]any {
	d := s.devices[i]
	return map[string]any{
		"DeviceID":    i + 1,
		"MessageType": "Attached",
		"Properties": map[string]any{
			"ConnectionSpeed": 480000000,
			"ConnectionType":  "USB",
			"DeviceID":        i + 1,
			"LocationID":      0x14100000 + i,
			"ProductID":       d.ProductID,
			"SerialNumber":    d.UDID,
			"USBSerialNumber": d.UDID,
		},
	}
}

func (s *Server) result(conn net.Conn, tag uint32, n int) error {
	return usbmux.WriteMessage(conn, tag, map[string]any{"MessageType": "Result", "Number": n})
}

// HTTPPort serves h on every tunnel handed to the returned function (a
// device's WDA port); stop ends the server and its tunnels.
func HTTPPort(h http.Handler) (serve func(net.Conn), stop func()) {
	ln := &tunnels{ch: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	serve = func(c net.Conn) {
		select {
		case ln.ch <- c:
		case <-ln.done:
			c.Close()
		}
	}
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ln.Close()
	}
	return serve, stop
}

// tunnels is a net.Listener whose connections are tunnels usbmux handed
// over.
type tunnels struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func (t *tunnels) Accept() (net.Conn, error) {
	select {
	case c := <-t.ch:
		return c, nil
	case <-t.done:
		return nil, net.ErrClosed
	}
}

func (t *tunnels) Close() error {
	t.once.Do(func() { close(t.done) })
	return nil
}

func (t *tunnels) Addr() net.Addr { return tunnelAddr{} }

type tunnelAddr struct{}

func (tunnelAddr) Network() string { return "usbmux" }
func (tunnelAddr) String() string  { return "usbmux" }
