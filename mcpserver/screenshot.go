package mcpserver

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"phonepilot/perception/frame"
	"phonepilot/plan/ai"
)

// Clients' image limits: Claude scales down anything with a long side
// above 1568 px, and several clients refuse results above 1 MB.
const (
	MaxImageEdge  = ai.MaxImageEdge
	MaxImageBytes = 1 << 20
)

// screenshot captures the screen for a client that asked for it, fitted
// to the limits; nil and why when there is none. The bytes go to the
// client only: they are neither kept nor logged.
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
	case len(f.PNG()) == 0:
		return nil, "the camera returned an empty frame"
	}
	img, err := fit(f.PNG(), MaxImageEdge, MaxImageBytes)
	if err != nil {
		return nil, err.Error()
	}
	return &mcp.ImageContent{MIMEType: img.MediaType, Data: img.Data}, ""
}

// fit downscales a PNG until its long side is at most maxEdge, its area
// what Claude takes without rescaling, and its size at most maxBytes.
func fit(png []byte, maxEdge, maxBytes int) (*ai.Image, error) {
	edge := maxEdge
	for {
		img, err := ai.FitPNG(png, edge, ai.MaxImagePixels)
		if err != nil {
			return nil, err
		}
		if len(img.Data) <= maxBytes {
			return img, nil
		}
		if edge < 64 {
			return nil, errors.New("the screenshot does not fit in 1 MB")
		}
		// PNG size goes with the area: shrink the edge by the square root
		// of the excess, and a little more.
		edge = min(max(img.Width, img.Height), edge) * 9 / 10
		for r := float64(len(img.Data)) / float64(maxBytes); r > 1.25; r /= 1.25 {
			edge = edge * 9 / 10
		}
	}
}
