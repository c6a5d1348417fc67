package mcpserver

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/perception/frame"
	"phonepilot/perception/shot"
)

// Clients' image limits: Claude scales down anything with a long side
// above 1568 px or an area above about 1.15 megapixels, and several
// clients refuse results above 1 MB.
const (
	MaxImageEdge   = 1568
	MaxImagePixels = 1_150_000
	MaxImageBytes  = 1 << 20
)

// screenshot captures the screen for a client that asked for it, fitted
// to the limits (perception/shot, the planner's fitting too); nil and why
// when there is none. The bytes go to the client only: they are neither
// kept nor logged.
func screenshot(ctx context.Context, cam frame.Camera) (*mcp.ImageContent, string) {
	if cam == nil {
		return nil, "this device has no camera"
	}
	f, err := cam.Capture(ctx)
	switch {
	case errors.Is(err, frame.ErrSecure):
		return nil, "the screen is secure (FLAG_SECURE) or black"
	case err != nil:
		return nil, "capture failed: " + err.Error()
	case f.Empty():
		return nil, "the camera returned an empty frame"
	}
	img, err := shot.Fit(f, shot.Options{MaxEdge: MaxImageEdge, MaxPixels: MaxImagePixels, MaxBytes: MaxImageBytes, Format: shot.JPEG})
	if err != nil {
		return nil, err.Error()
	}
	return &mcp.ImageContent{MIMEType: img.MediaType, Data: img.Data}, ""
}
